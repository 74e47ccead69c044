// The plugin's options: defaults (the SDK's), the choices of each opt-in option, and
// their validation with clear errors, in the order the SDK checks its own.
import { ttlMs } from './lifecycle.js'
import { checkNumber, describe } from './numbers.js'
import { warnUnknownOptions } from './option-names.js'

/** Characters per token of the SDK's previews and output budgets. */
export const CHARS_PER_TOKEN = 4
/** The SDK's default offload threshold, in tokens. */
export const DEFAULT_MAX_RESULT_TOKENS = 2_500
/** The SDK's default preview length, in tokens. */
export const DEFAULT_PREVIEW_TOKENS = 1_000
/** The SDK's default eviction window, in agent cycles. */
export const DEFAULT_EVICT_AFTER_CYCLES = 20
/** Text (UTF-16 units per block) up to which the header's native token count is exact. */
export const DEFAULT_EXACT_COUNT_LIMIT = 1_000_000
/** The share of a block's preview budget given to its first lines in a head-and-tail preview. */
export const DEFAULT_HEAD_SHARE = 0.5

/** Token counting choices: the agent model's `countTokens`, native encodings, or chars/4. */
export const TOKENIZERS = ['model', 'o200k_base', 'cl100k_base', 'heuristic']
/** The tokenizers counted natively (BPE encodings). */
export const NATIVE_TOKENIZERS = ['o200k_base', 'cl100k_base']
/** Preview modes: the SDK's head, head and tail lines, JSON outline. */
export const PREVIEW_MODES = ['head', 'headTail', 'structure']
/** What the model sees as references: storage references (the SDK's) or opaque session-scoped ids. */
export const REFERENCE_MODES = ['paths', 'opaque']
/** The retrieval tool: the SDK's, or extended with pages, token budgets, jq queries and a manifest. */
export const RETRIEVAL_KINDS = ['sdk', 'extended']
/** The smallest `maxResultTokens` extended retrieval pages within (a footer takes about 30 tokens). */
export const MIN_EXTENDED_RESULT_TOKENS = 100
/** What happens to a result whose storage failed. */
export const STORAGE_ERROR_MODES = ['keep', 'truncate']

/** Every option of the plugin (the SDK's five first); other keys get a warning (see ./option-names.js). */
export const OPTION_NAMES = [
  'storage',
  'maxResultTokens',
  'previewTokens',
  'includeRetrievalTool',
  'evictAfterCycles',
  'ttlSeconds',
  'tokenizer',
  'exactCountLimit',
  'preview',
  'headShare',
  'shouldOffload',
  'neverOffload',
  'onStorageError',
  'references',
  'retrieval',
  'offloadErrors',
]

/**
 * The core's options (`new Offloader(options)`): the plugin's, less what is about an
 * agent (its cycles, its model's tokenizer).
 */
export const CORE_OPTION_NAMES = OPTION_NAMES.filter((name) => name !== 'evictAfterCycles')

/**
 * Who takes the options: the plugin (the SDK's defaults, the agent model's tokenizer),
 * or the framework-neutral core (no model to ask: the SDK's heuristic by default).
 */
export const PLUGIN_PROFILE = { who: 'ContextOffloader', names: OPTION_NAMES, defaultTokenizer: 'model', tokenizers: TOKENIZERS }
export const CORE_PROFILE = {
  who: 'Offloader',
  names: CORE_OPTION_NAMES,
  defaultTokenizer: 'heuristic',
  tokenizers: TOKENIZERS.filter((t) => t !== 'model'),
}

/** A count of tokens as error messages show it (`1,000`). */
const count = (n) => (typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : String(n))

/**
 * Checks the `storage` option: nothing (`undefined`/`null`: the agent's storage), or an
 * object with `store`/`retrieve` (an offloader storage) or `write`/`read`/`delete`/`list`
 * (a unified storage). A path gets an error saying how to store in that directory.
 */
export function checkStorage(storage) {
  if (storage === undefined || storage === null) return
  if (typeof storage === 'string') {
    throw new TypeError(
      `storage must be a storage object, not a path: use storage: new FileStorage('${storage.replace(/[\\']/g, '\\$&')}') ` +
        `(FileStorage from 'context-offloader') to store in that directory`,
    )
  }
  const has = (...methods) => methods.every((m) => typeof storage[m] === 'function')
  if ((typeof storage !== 'object' && typeof storage !== 'function') || !(has('store', 'retrieve') || has('write', 'read', 'delete', 'list'))) {
    throw new TypeError(
      `storage must be an offloader storage (with store() and retrieve(), e.g. new FileStorage('./artifacts')) ` +
        `or a unified storage (with write(), read(), delete() and list()), got ${describe(storage)}`,
    )
  }
}

/** Validates an option that takes one of `choices`, with a message listing them (and why `why` is not one). */
function oneOf(option, value, choices, why = {}) {
  if (choices.includes(value)) return value
  const expected = choices.map((c) => `'${c}'`).join(', ')
  const reason = typeof value === 'string' && Object.hasOwn(why, value) ? ` (${why[value]})` : ''
  throw new Error(`Unknown ${option} ${typeof value === 'string' ? `'${value}'` : String(value)}: expected one of ${expected}${reason}`)
}

/**
 * The plugin's settings from its config, validated; throws on the first bad option.
 * @param {import('../index.d.ts').ContextOffloaderConfig} config
 * @param {number} defaultEvictAfterCycles - the eviction window when none is given
 * @param {typeof PLUGIN_PROFILE} [profile] - who takes them: the plugin or the core
 */
export function resolveOptions(config, defaultEvictAfterCycles = DEFAULT_EVICT_AFTER_CYCLES, profile = PLUGIN_PROFILE) {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new TypeError(`${profile.who} options must be an object such as { storage, maxResultTokens }, got ${describe(config)}`)
  }
  warnUnknownOptions(profile.who, config, profile.names)
  checkStorage(config.storage)
  const maxResultTokens = config.maxResultTokens ?? DEFAULT_MAX_RESULT_TOKENS
  const previewTokens = config.previewTokens ?? DEFAULT_PREVIEW_TOKENS
  // Past the SDK's own checks (below): no NaN or non-number. Fractions work (token
  // counts are whole, so `tokens > 2500.5` is `tokens > 2500`); Infinity means "only
  // when shouldOffload says so".
  checkNumber('maxResultTokens', maxResultTokens, 'a positive number of tokens (or Infinity)', () => true)
  checkNumber('previewTokens', previewTokens, 'a non-negative number of tokens', () => true)
  if (maxResultTokens <= 0) throw new Error(`maxResultTokens must be positive, got ${count(maxResultTokens)}`)
  if (previewTokens < 0) throw new Error(`previewTokens must be non-negative, got ${count(previewTokens)}`)
  if (previewTokens >= maxResultTokens) {
    // The SDK throws here too; the message says which value is a default the user did not set.
    const shown = (name, value, given) => `${name} (${given ? '' : 'default '}${count(value)})`
    throw new Error(
      `${shown('previewTokens', previewTokens, config.previewTokens != null)} must be less than ` +
        `${shown('maxResultTokens', maxResultTokens, config.maxResultTokens != null)}` +
        (config.previewTokens == null ? `: set previewTokens below ${count(maxResultTokens)} too` : ''),
    )
  }
  // The core has no cycles: its storages' lifecycle (TTL, byte budget) bounds them.
  const evictAfterCycles = !profile.names.includes('evictAfterCycles')
    ? null
    : config.evictAfterCycles === undefined
      ? defaultEvictAfterCycles
      : config.evictAfterCycles
  if (evictAfterCycles !== null && (!Number.isInteger(evictAfterCycles) || evictAfterCycles < 1)) {
    throw new Error(`evictAfterCycles must be a positive integer, got ${describe(evictAfterCycles)} (null disables eviction)`)
  }
  const tokenizer = oneOf('tokenizer', config.tokenizer ?? profile.defaultTokenizer, profile.tokenizers, {
    model: 'there is no model to ask here: the heuristic counts 4 characters of text or 2 of compact JSON per token',
  })
  const previewMode = oneOf('preview', config.preview ?? 'head', PREVIEW_MODES)
  const headShare = checkNumber(
    'headShare',
    config.headShare === undefined ? DEFAULT_HEAD_SHARE : config.headShare,
    "a number from 0 to 1 (the head's share of a headTail preview)",
    (n) => n >= 0 && n <= 1,
  )
  const onStorageError = oneOf('onStorageError', config.onStorageError ?? 'keep', STORAGE_ERROR_MODES)
  const references = oneOf('references', config.references ?? 'paths', REFERENCE_MODES)
  const retrieval = oneOf('retrieval', config.retrieval ?? 'sdk', RETRIEVAL_KINDS)
  if (retrieval === 'extended' && maxResultTokens < MIN_EXTENDED_RESULT_TOKENS) {
    throw new RangeError(
      `maxResultTokens must be at least ${MIN_EXTENDED_RESULT_TOKENS} with retrieval: 'extended' (a page needs room for its footer), got ${maxResultTokens}`,
    )
  }
  const offloadErrors = config.offloadErrors ?? false
  if (typeof offloadErrors !== 'boolean') throw new TypeError(`offloadErrors must be a boolean, got ${describe(offloadErrors)}`)
  if (config.shouldOffload !== undefined && typeof config.shouldOffload !== 'function') {
    throw new TypeError('shouldOffload must be a function (toolUse, result) => boolean | undefined')
  }
  const neverOffload = config.neverOffload ?? []
  if (!Array.isArray(neverOffload) || neverOffload.some((name) => typeof name !== 'string')) {
    throw new TypeError('neverOffload must be an array of tool names (strings)')
  }
  const exactCountLimit = config.exactCountLimit ?? DEFAULT_EXACT_COUNT_LIMIT
  checkNumber('exactCountLimit', exactCountLimit, 'a non-negative number of characters', (n) => n >= 0)
  const ttl = config.ttlSeconds === undefined ? undefined : ttlMs('ttlSeconds', config.ttlSeconds)
  return {
    maxResultTokens,
    previewTokens,
    evictAfterCycles,
    ttlMs: ttl,
    // Any value, read as the SDK reads it (`0` leaves the tool out).
    includeRetrievalTool: config.includeRetrievalTool ?? true,
    tokenizer,
    nativeTokenizer: NATIVE_TOKENIZERS.includes(tokenizer),
    previewMode,
    headShare,
    onStorageError,
    opaqueReferences: references === 'opaque',
    extendedRetrieval: retrieval === 'extended',
    offloadErrors,
    shouldOffload: config.shouldOffload,
    neverOffload: new Set(neverOffload),
    exactCountLimit,
  }
}
