// context-offloader: native drop-in replacement for the ContextOffloader plugin of
// @strands-agents/sdk. This file is only the glue the SDK needs (hooks, the retrieval
// tool, SDK content blocks); storage, search and encoding run in Rust (binding.js).
import {
  AfterToolCallEvent,
  BeforeModelCallEvent,
  DocumentBlock,
  ImageBlock,
  JsonBlock,
  Message,
  StorageError,
  TextBlock,
  ToolResultBlock,
  VideoBlock,
  tool,
  toolResultContentFromData,
} from '@strands-agents/sdk'
import {
  FileStorage as SdkFileStorage,
  InMemoryStorage as SdkInMemoryStorage,
} from '@strands-agents/sdk/vended-plugins/context-offloader'
import { InMemoryStorage as SdkUnifiedInMemoryStorage } from '@strands-agents/sdk/storage'
import { z } from 'zod'
import { createCounting, heuristicContentTokens } from './counting.js'
import { createTokenApi } from './tokens.js'

const native = await loadNative()
const tokenApi = createTokenApi(native)
const counting = createCounting(native, tokenApi)

/**
 * Number of BPE tokens of `text` in an OpenAI encoding (`'o200k_base'`, the default,
 * or `'cl100k_base'`), counted natively on a worker thread. Exact for OpenAI models
 * using that encoding; only an approximation for other model families.
 * @type {(text: string, encoding?: 'o200k_base' | 'cl100k_base') => Promise<number>}
 */
export const countTokens = tokenApi.countTokens
/** {@link countTokens} on the calling thread (for short texts). */
export const countTokensSync = tokenApi.countTokensSync
/** The encodings {@link countTokens} accepts. */
export const ENCODINGS = tokenApi.ENCODINGS
/**
 * Gives an SDK `Model` native counting for its `countTokens`, so the SDK's
 * conversation and context managers get exact OpenAI-encoding counts. Returns the model.
 */
export const withNativeTokenCounting = counting.withNativeTokenCounting

/** Loads the platform's prebuilt addon, or fails with a message naming the platform. */
async function loadNative() {
  try {
    return await import('./binding.js')
  } catch (cause) {
    const platform = `${process.platform}-${process.arch}`
    throw new Error(
      `context-offloader: no prebuilt native binary for ${platform} could be loaded. ` +
        `Install the package on a supported platform (linux x64/arm64 gnu/musl, macOS x64/arm64, ` +
        `windows x64/arm64) or build it from source with \`npm run build\`. Cause: ${cause?.message ?? cause}`,
      { cause },
    )
  }
}

/** Loads a module of the installed SDK that its package exports do not expose (best effort). */
async function importSdkInternal(relativePath) {
  try {
    const base = import.meta.resolve('@strands-agents/sdk')
    return await import(new URL(relativePath, base).href)
  } catch {
    return undefined
  }
}

const sdkLogging = await importSdkInternal('./logging/logger.js')
const sdkAgentAsTool = await importSdkInternal('./agent/agent-as-tool.js')

/** The SDK's logger (honours `configureLogging`), or the SDK's default behaviour. */
const logger = {
  debug: (...args) => sdkLogging?.logger?.debug?.(...args),
  warn: (...args) => (sdkLogging?.logger ? sdkLogging.logger.warn(...args) : console.warn(...args)),
}

// Symbols shared with the SDK's unified storage (registered globally with Symbol.for).
const NAMESPACED = Symbol.for('strands.storage.namespaced')
const EPHEMERAL = Symbol.for('strands.storage.ephemeral')
/** Internal handle of our storages: the native store behind them. */
const NATIVE = Symbol('context-offloader.native')
/** Internal: reference style used when the plugin stores into a FileStorage. */
const PLUGIN_VIEW = Symbol('context-offloader.pluginView')

const CHARS_PER_TOKEN = 4
const DEFAULT_MAX_RESULT_TOKENS = 2_500
const DEFAULT_PREVIEW_TOKENS = 1_000
const DEFAULT_EVICT_AFTER = 20
const RETRIEVAL_TOOL_NAME = 'retrieve_offloaded_content'
/** Token counting choices: the agent model's `countTokens`, native encodings, or chars/4. */
const TOKENIZERS = ['model', 'o200k_base', 'cl100k_base', 'heuristic']
const NATIVE_TOKENIZERS = ['o200k_base', 'cl100k_base']
const PREVIEW_MODES = ['head', 'headTail', 'structure']
const STORAGE_ERROR_MODES = ['keep', 'truncate']
/** Text (UTF-16 units per block) up to which the header's native token count is exact. */
const DEFAULT_EXACT_COUNT_LIMIT = 1_000_000

/** Longest slice of a string copied into native memory between two yields to the event loop. */
const SLICE_UNITS = 1 << 19

const yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Copies a JavaScript string into native memory. Slices whose characters are all
 * below U+0100 are copied byte for byte (V8 answers the regex test in constant time
 * for one-byte strings); others as UTF-16. Long strings go in slices with a yield to
 * the event loop between them, so a 10 MB result never blocks timers for long; the
 * UTF-8 encoding happens later on a worker thread.
 */
async function toNativeText(text) {
  const nativeText = new native.NativeText(text.length)
  for (let offset = 0; offset < text.length; offset += SLICE_UNITS) {
    const slice = text.length <= SLICE_UNITS ? text : text.slice(offset, offset + SLICE_UNITS)
    if (/[^\x00-\xff]/.test(slice)) nativeText.pushUtf16(slice)
    else nativeText.pushLatin1(slice)
    if (offset + SLICE_UNITS < text.length) await yieldToEventLoop()
  }
  return nativeText
}

/** Returns a plain Uint8Array view of a Buffer (so SDK blocks hold the type they expect). */
function asUint8Array(buffer) {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** Accepts what JavaScript callers pass as content: Uint8Array/Buffer/ArrayBuffer/string. */
function toBytes(content) {
  if (content instanceof Uint8Array) return content
  if (content instanceof ArrayBuffer) return new Uint8Array(content)
  if (ArrayBuffer.isView(content)) return new Uint8Array(content.buffer, content.byteOffset, content.byteLength)
  if (typeof content === 'string') return new TextEncoder().encode(content)
  throw new TypeError('content must be a Uint8Array, Buffer, ArrayBuffer or string')
}

/**
 * The SDK's `StorageError` for a failed key-value operation of the native store. Native
 * messages are `<SDK message>\0<OS error or nothing>`; the SDK message may contain NUL
 * itself (keys may), the OS error never does, so the split is at the last NUL.
 */
function toStorageError(err) {
  const text = String(err?.message ?? err)
  const split = text.lastIndexOf('\u0000')
  if (split < 0) return new StorageError(text, { cause: err })
  const cause = text.slice(split + 1)
  return new StorageError(text.slice(0, split), cause ? { cause: new Error(cause) } : undefined)
}

/** Runs a native key-value call, rethrowing its failure as the SDK's `StorageError`. */
async function kvCall(run) {
  try {
    return await run()
  } catch (err) {
    throw toStorageError(err)
  }
}

/**
 * Shared implementation of the two native-backed storages: the offloader interface
 * (`store`/`retrieve`) and the SDK's unified `Storage` (`write`/`read`/`delete`/
 * `list`/`namespace`), with keys normalised natively as the SDK's `normalizeKey`.
 */
class NativeBackedStorage {
  constructor(nativeStore, concatenated) {
    Object.defineProperty(this, NATIVE, { value: nativeStore })
    Object.defineProperty(this, PLUGIN_VIEW, { value: concatenated, writable: true })
  }

  /**
   * Stores one content block and returns its reference.
   * @param {string} key - A unique key for this content block.
   * @param {Uint8Array} content - The raw bytes.
   * @param {string} [contentType='text/plain'] - MIME type, kept with the content.
   */
  async store(key, content, contentType = 'text/plain') {
    const nativeStore = this[NATIVE]
    const args = [String(key), toBytes(content), String(contentType), this[PLUGIN_VIEW]]
    const outcome = nativeStore.storeBytesNow(...args) ?? (await nativeStore.storeBytes(...args))
    return outcome.reference
  }

  /**
   * Retrieves a block by reference; rejects with `Reference not found: <ref>` when unknown.
   * @param {string} reference
   */
  async retrieve(reference) {
    const outcome = await this[NATIVE].retrieve(String(reference))
    return { content: asUint8Array(outcome.content), contentType: outcome.contentType }
  }

  /**
   * Unified storage: stores `data` under `key`, replacing any value (bytes are copied).
   * @param {string} key
   * @param {Uint8Array} data
   */
  async write(key, data) {
    const nativeStore = this[NATIVE]
    const bytes = toBytes(data)
    await kvCall(async () => {
      if (!nativeStore.kvWriteNow(key, bytes)) await nativeStore.kvWrite(key, bytes)
    })
  }

  /**
   * Unified storage: the bytes under `key` (a copy), or `null`.
   * @param {string} key
   */
  async read(key) {
    const value = await kvCall(() => this[NATIVE].kvRead(key))
    return value === null ? null : asUint8Array(value)
  }

  /**
   * Unified storage: removes `key` (no-op when missing).
   * @param {string} key
   */
  async delete(key) {
    await kvCall(() => this[NATIVE].kvDelete(key))
  }

  /**
   * Unified storage: the full keys starting with `prefix`, sorted.
   * @param {string} prefix
   */
  async list(prefix) {
    return kvCall(() => this[NATIVE].kvList(prefix))
  }

  /**
   * Unified storage: a view with every key under `prefix` (composable; marked as
   * namespaced, as the SDK's views are).
   * @param {string} prefix
   */
  namespace(prefix) {
    return namespaceView(this, prefix)
  }
}

/**
 * Offloaded content kept in native memory (not on the V8 heap), with the SDK's
 * turn-based eviction: entries not stored or retrieved within `evictAfterTurns`
 * agent cycles are dropped. References look like `mem_<n>_<key>`.
 */
export class InMemoryStorage extends NativeBackedStorage {
  static DEFAULT_EVICT_AFTER_TURNS = DEFAULT_EVICT_AFTER
  #evictAfterTurns
  #boundAgent = null;
  /** Content does not survive a restart (as the SDK's unified InMemoryStorage). */
  [EPHEMERAL] = true

  /** @param {number | null} [evictAfterTurns=20] - idle cycles before eviction; `null` disables. */
  constructor(evictAfterTurns = InMemoryStorage.DEFAULT_EVICT_AFTER_TURNS) {
    if (evictAfterTurns !== null && evictAfterTurns < 1) {
      throw new Error('evictAfterTurns must be a positive integer')
    }
    super(native.NativeStore.memory(nativeCycles(evictAfterTurns)), false)
    this.#evictAfterTurns = evictAfterTurns
  }

  /** Removes all stored content (offloaded blocks and unified-storage values). */
  clear() {
    this[NATIVE].clear()
    this[NATIVE].kvClear()
  }

  /** Number of entries held. */
  get size() {
    return this[NATIVE].size
  }

  /** Total bytes of content held in native memory. */
  get byteLength() {
    return this[NATIVE].byteLength
  }

  /**
   * Claims this storage for one agent and adopts the plugin's eviction window unless
   * one was set at construction (as the SDK's InMemoryStorage does).
   * @internal
   */
  _bind(agent, evictAfterCycles) {
    if (this.#boundAgent === null) {
      this.#boundAgent = new WeakRef(agent)
    } else if (this.#boundAgent.deref() !== agent) {
      throw new Error(
        'InMemoryStorage cannot be shared across multiple agents. ' + 'Use a separate InMemoryStorage instance per agent.',
      )
    }
    if (evictAfterCycles !== undefined && this.#evictAfterTurns === InMemoryStorage.DEFAULT_EVICT_AFTER_TURNS) {
      this.#evictAfterTurns = evictAfterCycles
      this[NATIVE].setEvictAfter(nativeCycles(evictAfterCycles))
    }
  }

  /**
   * Sets the current cycle and evicts idle entries. Called by the plugin before each model call.
   * @internal
   */
  _evict(cycle) {
    const evicted = this[NATIVE].evict(cycle)
    if (evicted > 0) logger.debug(`evicted=<${evicted}>, cycle=<${cycle}> | stale entries removed`)
  }
}

/**
 * Offloaded content as files in one directory, with the SDK's file names
 * (`<ms>_<n>_<key><ext>`). Each file is written atomically; content types are kept
 * in an append-only journal (and read from the SDK's `.metadata.json`), so they
 * survive restarts and concurrent writers. `retrieve` never reads outside the directory.
 */
export class FileStorage extends NativeBackedStorage {
  #artifactDir
  #durable

  /**
   * @param {string | { artifactDir?: string, durable?: boolean }} [options='./artifacts']
   *   the directory, or options; `durable: true` fsyncs each file and the directory.
   */
  constructor(options = './artifacts') {
    const artifactDir = typeof options === 'string' ? options : (options?.artifactDir ?? './artifacts')
    const durable = typeof options === 'object' && options !== null ? Boolean(options.durable) : false
    if (typeof artifactDir !== 'string' || artifactDir.length === 0) {
      throw new TypeError('FileStorage artifactDir must be a non-empty string')
    }
    super(native.NativeStore.file(artifactDir, durable), false)
    this.#artifactDir = artifactDir
    this.#durable = durable
  }

  /** The directory artifacts are written to, as given. */
  get artifactDir() {
    return this.#artifactDir
  }

  /**
   * Unified storage: a view rooted at `<dir>/<prefix>`, as the SDK's
   * `LocalFileStorage.namespace` (keys and error messages relative to it; composable).
   * @param {string} prefix
   */
  namespace(prefix) {
    const normalized = normalizePrefix(prefix)
    return fileNamespaceView(this[NATIVE], normalized)
  }

  /**
   * A storage on the same directory with its own counter and the SDK plugin's
   * reference form (`<dir>/<file>`), as the SDK's per-agent FileStorage has.
   * @internal
   */
  _pluginView() {
    const view = new FileStorage({ artifactDir: this.#artifactDir, durable: this.#durable })
    view[PLUGIN_VIEW] = true
    return view
  }
}

// ── S3Storage ─────────────────────────────────────────────────────────────────────

/**
 * Offloaded content as objects of one S3 bucket (AWS or any S3-compatible server),
 * with the SDK's object keys (`<prefix><ms>_<n>_<key>`) and references
 * (`s3://<bucket>/<key>`; raw keys are accepted by `retrieve`). Uploads, downloads and
 * searches run natively: at most `maxInFlight` (8) requests at once, each attempt
 * bounded by `timeoutMs`, throttling/5xx/connection errors retried with backoff up to
 * `maxAttempts`, bodies above 16 MiB uploaded in parts (aborted on failure).
 */
export class S3Storage extends NativeBackedStorage {
  /**
   * @param {string} bucket
   * @param {import('./index.d.ts').S3StorageOptions} [options]
   */
  constructor(bucket, options = {}) {
    if (typeof bucket !== 'string' || bucket.length === 0) throw new TypeError('S3Storage bucket must be a non-empty string')
    const { prefix, region, endpoint, forcePathStyle, credentials, timeoutMs, maxAttempts, maxInFlight } = options ?? {}
    const nativeStore = new native.NativeS3Store(bucket, {
      prefix,
      region,
      endpoint,
      forcePathStyle,
      credentials,
      timeoutMs,
      maxAttempts,
      maxInFlight,
    })
    super(nativeStore, false)
  }

  /** The bucket objects are written to. */
  get bucket() {
    return this[NATIVE].bucket
  }

  /** The normalised key prefix (`''` or ending in `/`). */
  get prefix() {
    return this[NATIVE].prefix
  }

  /**
   * Unified storage: stores `data` under `key` (the object `<prefix><key>`, as the SDK's
   * unified `S3Storage`), replacing any value. Bytes are copied before the upload starts.
   * @param {string} key
   * @param {Uint8Array} data
   */
  async write(key, data) {
    const bytes = toBytes(data)
    await kvCall(() => this[NATIVE].kvWrite(key, bytes))
  }
}

/**
 * The native eviction window for a JavaScript one. Entries are evicted when
 * `lastAccess < cycle - n`; for integer cycles that equals `lastAccess < cycle - floor(n)`.
 */
function nativeCycles(n) {
  return n === null || !Number.isFinite(n) ? null : Math.floor(n)
}

function isOffloaderStorage(storage) {
  return 'store' in storage && 'retrieve' in storage
}

/** Same framing as the SDK for unified storages: [u16 BE type length][type][content]. */
function frameContent(content, contentType) {
  const ctBytes = new TextEncoder().encode(contentType)
  const frame = new Uint8Array(2 + ctBytes.length + content.length)
  frame[0] = (ctBytes.length >> 8) & 0xff
  frame[1] = ctBytes.length & 0xff
  frame.set(ctBytes, 2)
  frame.set(content, 2 + ctBytes.length)
  return frame
}

function unframeContent(frame) {
  const ctLen = (frame[0] << 8) | frame[1]
  const contentType = new TextDecoder().decode(frame.subarray(2, 2 + ctLen))
  const content = frame.subarray(2 + ctLen)
  return { content, contentType }
}

/** The SDK's namespacing of unified storages (prefix normalisation included). */
function normalizePrefix(prefix) {
  if (prefix.includes('\\')) throw new StorageError(`Invalid storage prefix '${prefix}': backslashes are not allowed`)
  const parts = prefix.split('/')
  const segments = parts.filter(Boolean)
  if (segments.includes('..')) throw new StorageError(`Invalid storage prefix '${prefix}': '..' path segments are not allowed`)
  const joined = segments.join('/')
  return parts[parts.length - 1] === '' && joined ? joined + '/' : joined
}

function namespaceView(storage, prefix) {
  const normalized = normalizePrefix(prefix)
  const p = normalized ? `${normalized}/` : ''
  const view = {
    write: (key, data) => storage.write(`${p}${key}`, data),
    read: (key) => storage.read(`${p}${key}`),
    delete: (key) => storage.delete(`${p}${key}`),
    list: (query) => storage.list(`${p}${query}`).then((keys) => keys.map((key) => key.slice(p.length))),
    namespace: (sub) => namespaceView(storage, `${p}${sub}`),
    [NAMESPACED]: true,
  }
  if (EPHEMERAL in storage) view[EPHEMERAL] = true
  return view
}

/**
 * A namespaced view of a native file store: the directory `<dir>/<scope>`, with keys,
 * listings and error messages relative to it (what the SDK's `LocalFileStorage`
 * namespace returns). Confinement and reserved names are checked from the root.
 */
function fileNamespaceView(nativeStore, scope) {
  const view = {
    async write(key, data) {
      const bytes = toBytes(data)
      await kvCall(() => nativeStore.kvWrite(key, bytes, scope))
    },
    async read(key) {
      const value = await kvCall(() => nativeStore.kvRead(key, scope))
      return value === null ? null : asUint8Array(value)
    },
    async delete(key) {
      await kvCall(() => nativeStore.kvDelete(key, scope))
    },
    async list(prefix) {
      return kvCall(() => nativeStore.kvList(prefix, scope))
    },
    namespace(sub) {
      const normalized = normalizePrefix(sub)
      return fileNamespaceView(nativeStore, normalized ? `${scope}/${normalized}` : scope)
    },
  }
  Object.defineProperty(view, NAMESPACED, { value: true })
  return view
}

function resolveNamespace(storage, prefix) {
  if (NAMESPACED in storage) return storage
  if (storage.namespace) return storage.namespace(prefix)
  return namespaceView(storage, prefix)
}

async function storeContent(storage, key, content, contentType) {
  if (isOffloaderStorage(storage)) return storage.store(key, content, contentType)
  const ct = contentType ?? 'application/octet-stream'
  await storage.write(key, frameContent(content, ct))
  return key
}

async function retrieveContent(storage, reference) {
  if (isOffloaderStorage(storage)) return storage.retrieve(reference)
  const data = await storage.read(reference)
  if (data === null) throw new Error(`Reference not found: ${reference}`)
  return unframeContent(data)
}

const retrievalInputSchema = z.object({
  reference: z.string().describe('The reference string from the offload placeholder (e.g. "mem_1_tool-123_0").'),
  pattern: z
    .string()
    .optional()
    .describe('Regex or keyword to grep for. Returns only matching lines with context — not the full content.'),
  line_range: z
    .object({
      start: z.number().int().min(1).describe('First line to return (1-indexed).'),
      end: z.number().int().min(1).describe('Last line to return (1-indexed).'),
    })
    .optional()
    .describe('Return only this span of lines. Combine with pattern to search within the range.'),
  context_lines: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Lines before AND after each match (like grep -C). Default: 5. Without pattern/line_range, returns first N lines.',
    ),
})

const RETRIEVAL_TOOL_DESCRIPTION =
  'When a tool result was too large to keep in context, it was stored externally and replaced with a preview and a reference. ' +
  'Use this tool with that reference to access the stored content.\n\n' +
  'Returns:\n' +
  '  - With pattern: matching lines with line numbers and surrounding context\n' +
  '  - With line_range: the specified span of lines with line numbers\n' +
  '  - Without pattern/line_range: the full original content (use sparingly — re-injects all tokens)\n\n' +
  'Constraints:\n' +
  '  - pattern/line_range/context_lines only work on text content. For binary content, omit them.\n' +
  '  - Line numbers in results are 1-indexed and can be used in follow-up line_range calls.\n\n' +
  'Examples:\n' +
  '  { reference: "ref_1", pattern: "error" } → lines containing "error" with 5 lines context\n' +
  '  { reference: "ref_1", pattern: "error|warning", context_lines: 3 } → regex, 3 lines context\n' +
  '  { reference: "ref_1", line_range: { start: 10, end: 25 } } → lines 10-25\n' +
  '  { reference: "ref_1", pattern: "TODO", line_range: { start: 1, end: 50 } } → search within range'

/** First `maxChars` UTF-16 units of `parts.join('\n')`, without building the join. */
function previewOf(parts, previewTokens) {
  const maxChars = previewTokens * CHARS_PER_TOKEN
  let out = ''
  for (let i = 0; i < parts.length && out.length < maxChars; i++) {
    if (i > 0) out += '\n'
    out += parts[i].length > maxChars ? parts[i].slice(0, maxChars) : parts[i]
  }
  return out.length <= maxChars ? out : out.slice(0, maxChars)
}

function getBytes(block) {
  if (block instanceof ImageBlock && block.source.type === 'imageSourceBytes') return block.source.bytes
  if (block instanceof VideoBlock && block.source.type === 'videoSourceBytes') return block.source.bytes
  if (block instanceof DocumentBlock) {
    if (block.source.type === 'documentSourceBytes') return block.source.bytes
    if (block.source.type === 'documentSourceText') return new TextEncoder().encode(block.source.text)
  }
  return undefined
}

function decodeStoredContent(content, contentType, reference) {
  if (contentType.startsWith('text/')) return new TextDecoder().decode(content)
  if (contentType === 'application/json') {
    const text = new TextDecoder().decode(content)
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  if (contentType.startsWith('image/')) {
    return new ImageBlock({ format: contentType.split('/').pop(), source: { bytes: content } })
  }
  if (contentType.startsWith('video/')) {
    return new VideoBlock({ format: contentType.split('/').pop(), source: { bytes: content } })
  }
  if (contentType.startsWith('application/')) {
    return new DocumentBlock({ format: contentType.split('/').pop(), name: reference, source: { bytes: content } })
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(content)
}

/** Whether a tool is an agent used as a delegate (its result is the final answer). */
function isDelegatingAgentTool(candidate) {
  if (!candidate || !candidate.delegate) return false
  const AgentAsTool = sdkAgentAsTool?.AgentAsTool
  return AgentAsTool ? candidate instanceof AgentAsTool : candidate.constructor?.name === 'AgentAsTool'
}

function searchMessage(outcome) {
  if (outcome.output != null) return outcome.output
  if (outcome.error != null) return `Error: ${outcome.error}`
  return (
    `Error: cannot search binary content (${outcome.contentType}). ` +
    'Omit pattern/line_range/context_lines to retrieve the full content.'
  )
}

function searchQueryOf(input) {
  return {
    pattern: input.pattern,
    lineStart: input.line_range?.start,
    lineEnd: input.line_range?.end,
    contextLines: input.context_lines,
  }
}

/** Validates an option that takes one of `choices`, with a message listing them. */
function oneOf(option, value, choices) {
  if (choices.includes(value)) return value
  const expected = choices.map((c) => `'${c}'`).join(', ')
  throw new Error(`Unknown ${option} ${typeof value === 'string' ? `'${value}'` : String(value)}: expected one of ${expected}`)
}

/**
 * Plugin that offloads oversized tool results (drop-in for the SDK's ContextOffloader).
 *
 * When a tool result exceeds `maxResultTokens` (counted by the agent model's
 * `countTokens`), every content block is stored and the result is replaced with a
 * preview of `previewTokens` tokens plus references; a `retrieve_offloaded_content`
 * tool lets the agent grep or slice what was stored.
 */
export class ContextOffloader {
  name = 'strands:context-offloader'
  static _DEFAULT_EVICT_AFTER_CYCLES = DEFAULT_EVICT_AFTER
  _storage
  _sandboxableStorage
  _maxResultTokens
  _previewTokens
  _includeRetrievalTool
  _evictAfterCycles
  _storageByAgent = new WeakMap()
  _keyStoredAt = new Map()
  _retrievalTool
  /** Whether `_storage` is the agent's own storage, one of ours (see `initAgent`). */
  _usesAgentStorage = false

  _tokenizer
  _previewMode
  _onStorageError
  _shouldOffload
  _neverOffload
  _exactCountLimit
  /** Resolves with the native encoding's longest token in bytes (native tokenizers only). */
  _encodingReady
  /** The agent the plugin was last added to (for `offload()` without an agent). */
  _lastAgent
  /** The per-agent FileStorage view used by `offload()` without any agent. */
  _detachedView

  /** @param {import('./index.d.ts').ContextOffloaderConfig} [config] */
  constructor(config = {}) {
    const maxResultTokens = config.maxResultTokens ?? DEFAULT_MAX_RESULT_TOKENS
    const previewTokens = config.previewTokens ?? DEFAULT_PREVIEW_TOKENS
    if (maxResultTokens <= 0) throw new Error('maxResultTokens must be positive')
    if (previewTokens < 0) throw new Error('previewTokens must be non-negative')
    if (previewTokens >= maxResultTokens) throw new Error('previewTokens must be less than maxResultTokens')
    const evictAfterCycles =
      config.evictAfterCycles === undefined ? ContextOffloader._DEFAULT_EVICT_AFTER_CYCLES : config.evictAfterCycles
    if (evictAfterCycles !== null && (!Number.isInteger(evictAfterCycles) || evictAfterCycles < 1)) {
      throw new Error('evictAfterCycles must be a positive integer')
    }
    this._tokenizer = oneOf('tokenizer', config.tokenizer ?? 'model', TOKENIZERS)
    this._previewMode = oneOf('preview', config.preview ?? 'head', PREVIEW_MODES)
    this._onStorageError = oneOf('onStorageError', config.onStorageError ?? 'keep', STORAGE_ERROR_MODES)
    if (config.shouldOffload !== undefined && typeof config.shouldOffload !== 'function') {
      throw new TypeError('shouldOffload must be a function (toolUse, result) => boolean | undefined')
    }
    this._shouldOffload = config.shouldOffload
    const neverOffload = config.neverOffload ?? []
    if (!Array.isArray(neverOffload) || neverOffload.some((name) => typeof name !== 'string')) {
      throw new TypeError('neverOffload must be an array of tool names (strings)')
    }
    this._neverOffload = new Set(neverOffload)
    const exactCountLimit = config.exactCountLimit ?? DEFAULT_EXACT_COUNT_LIMIT
    if (typeof exactCountLimit !== 'number' || !(exactCountLimit >= 0)) {
      throw new Error('exactCountLimit must be a non-negative number of characters')
    }
    this._exactCountLimit = exactCountLimit
    if (NATIVE_TOKENIZERS.includes(this._tokenizer)) {
      // The vocabulary loads on a worker thread while the agent starts.
      this._encodingReady = native.loadEncoding(this._tokenizer)
      this._encodingReady.catch(() => {})
    }
    if (config.storage) this._resolveAndSetStorage(config.storage)
    this._maxResultTokens = maxResultTokens
    this._previewTokens = previewTokens
    this._includeRetrievalTool = config.includeRetrievalTool ?? true
    this._evictAfterCycles = evictAfterCycles
  }

  _resolveAndSetStorage(storage) {
    this._storage = isOffloaderStorage(storage) ? storage : resolveNamespace(storage, 'offloader')
    this._sandboxableStorage =
      !isOffloaderStorage(this._storage) && 'forSandbox' in this._storage ? this._storage : undefined
  }

  /** Registers the hooks on `agent` (called by the SDK). */
  initAgent(agent) {
    // Without a storage the SDK uses the agent's, else its unified in-memory storage
    // (references are then the bare keys); ours does the same for identical output.
    //
    // When the agent's storage is one of ours (`new Agent({ storage: new FileStorage(dir) })`),
    // it implements both interfaces. The SDK's plugin decides with
    // `'store' in storage && 'retrieve' in storage`, so for that agent it takes the
    // offloader path: it calls `store()`/`retrieve()` on that very instance (no
    // `offloader/` keys, no framing), gives a FileStorage no per-agent view (it only does
    // that for its own FileStorage class), so references are `path.join(dir, file)` numbered
    // by the storage's own counter, and never binds or evicts an InMemoryStorage (it only
    // does that for its own legacy class). We do exactly the same, so the model sees the
    // same references as with the SDK's plugin, and one InMemoryStorage can serve as the
    // storage of several agents, as a unified storage may. Taking the unified path
    // instead would change every reference the model sees (bare keys instead of file
    // paths or `mem_<n>_` names) and break the drop-in promise.
    if (!this._storage) {
      const agentStorage = agent.storage
      this._resolveAndSetStorage(agentStorage ?? new SdkUnifiedInMemoryStorage())
      this._usesAgentStorage = agentStorage !== undefined && agentStorage[NATIVE] !== undefined
    }
    if (this._isLegacyMemoryStorage()) this._storage._bind(agent, this._evictAfterCycles)
    this._storageForAgent(agent)
    this._lastAgent = new WeakRef(agent)
    agent.addHook(AfterToolCallEvent, (event) => this._handleToolResult(event))
    agent.addHook(BeforeModelCallEvent, () => {
      const cycleCount = agent.metrics.cycleCount
      if (this._isLegacyMemoryStorage()) this._storage._evict(cycleCount)
      else if (this._evictAfterCycles !== null) this._evict(cycleCount, agent)
    })
  }

  _isLegacyMemoryStorage() {
    if (this._usesAgentStorage) return false
    return this._storage instanceof InMemoryStorage || this._storage instanceof SdkInMemoryStorage
  }

  _evict(currentCycle, agent) {
    const threshold = currentCycle - this._evictAfterCycles
    const toEvict = []
    for (const [key, storedCycle] of this._keyStoredAt) {
      if (storedCycle < threshold) toEvict.push(key)
    }
    if (toEvict.length === 0) return
    const storage = this._storageForAgent(agent)
    for (const key of toEvict) {
      this._keyStoredAt.delete(key)
      storage.delete(key).catch(() => {})
    }
    logger.debug(`evicted=<${toEvict.length}>, threshold=<${threshold}> | evicted stale offloaded entries`)
  }

  /** The retrieval tool (unless `includeRetrievalTool` is false). */
  getTools() {
    if (!this._includeRetrievalTool) return []
    if (!this._retrievalTool) this._retrievalTool = this._createRetrievalTool()
    return [this._retrievalTool]
  }

  _perAgent() {
    if (this._usesAgentStorage) return false
    return (
      this._sandboxableStorage !== undefined ||
      this._storage instanceof SdkFileStorage ||
      this._storage instanceof FileStorage
    )
  }

  _storageForAgent(agent) {
    if (!this._perAgent()) return this._storage
    if (!agent) {
      // `offload()` before the plugin is added to an agent: a FileStorage needs no sandbox.
      if (this._storage instanceof FileStorage) return (this._detachedView ??= this._storage._pluginView())
      throw new Error('ContextOffloader.offload() needs `agent` for a sandboxed storage')
    }
    let storage = this._storageByAgent.get(agent)
    if (!storage) {
      if (this._sandboxableStorage) storage = this._sandboxableStorage.forSandbox(agent.sandbox)
      else if (this._storage instanceof FileStorage) storage = this._storage._pluginView()
      else storage = this._storage.forSandbox(agent.sandbox)
      this._storageByAgent.set(agent, storage)
    }
    return storage
  }

  _storageForToolContext(context) {
    if (!this._perAgent()) return this._storage
    if (!context) throw new Error('File-based storage retrieval requires a tool execution context.')
    return this._storageForAgent(context.agent)
  }

  _createRetrievalTool() {
    const maxChars = this._maxResultTokens * CHARS_PER_TOKEN
    return tool({
      name: RETRIEVAL_TOOL_NAME,
      description: RETRIEVAL_TOOL_DESCRIPTION,
      inputSchema: retrievalInputSchema,
      callback: async (input, context) => {
        try {
          const storage = this._storageForToolContext(context)
          const fullRetrieval = !input.pattern && !input.line_range && input.context_lines === undefined
          const nativeStore = storage[NATIVE]
          if (nativeStore && !fullRetrieval) {
            return searchMessage(await nativeStore.search(input.reference, searchQueryOf(input), maxChars))
          }
          const result = await retrieveContent(storage, input.reference)
          if (fullRetrieval) return decodeStoredContent(result.content, result.contentType, input.reference)
          const content = result.content instanceof Uint8Array ? result.content : toBytes(result.content)
          return searchMessage(await native.searchBytes(content, result.contentType, searchQueryOf(input), maxChars))
        } catch {
          return `Error: reference not found: ${input.reference}`
        }
      },
    })
  }

  /**
   * Stores a text block. With a native storage the text was already handed over
   * (`nativeText`), so the store is requested synchronously: blocks are numbered in
   * their order in the result, as the SDK numbers them.
   */
  async _storeText(storage, key, text, contentType, nativeText) {
    if (nativeText) {
      const nativeStore = storage[NATIVE]
      const outcome =
        nativeStore.storeTextNow(key, nativeText, contentType, storage[PLUGIN_VIEW]) ??
        (await nativeStore.storeText(key, nativeText, contentType, storage[PLUGIN_VIEW]))
      return { ref: outcome.reference, byteLength: outcome.byteLength }
    }
    const bytes = new TextEncoder().encode(text)
    return { ref: await storeContent(storage, key, bytes, contentType), byteLength: bytes.length }
  }

  /** Hands every text and JSON block of `content` to native memory, in order. */
  async _transferTexts(content, jsonTexts) {
    const nativeTexts = new Map()
    for (const [i, block] of content.entries()) {
      if (block instanceof TextBlock && block.text) nativeTexts.set(i, await toNativeText(block.text))
      else if (block instanceof JsonBlock) nativeTexts.set(i, await toNativeText(jsonTexts.get(i)))
    }
    return nativeTexts
  }

  /**
   * Stores one block. `encoded` is the block's text already encoded natively (when
   * the preview was built natively): native stores take it without another copy.
   */
  async _storeBlock(storage, block, key, jsonText, nativeText, encoded) {
    if (encoded && ((block instanceof TextBlock && block.text) || block instanceof JsonBlock)) {
      const contentType = block instanceof TextBlock ? 'text/plain' : 'application/json'
      const nativeStore = storage[NATIVE]
      let ref
      if (typeof nativeStore?.storeEncoded === 'function') {
        const args = [key, encoded, contentType, storage[PLUGIN_VIEW]]
        ref = (nativeStore.storeEncodedNow(...args) ?? (await nativeStore.storeEncoded(...args))).reference
      } else {
        ref = await storeContent(storage, key, asUint8Array(encoded.toBuffer()), contentType)
      }
      const description =
        block instanceof TextBlock
          ? `text, ${block.text.length.toLocaleString()} chars`
          : `json, ${encoded.byteLength.toLocaleString()} bytes`
      return { ref, contentType, description }
    }
    if (block instanceof TextBlock && block.text) {
      const { ref } = await this._storeText(storage, key, block.text, 'text/plain', nativeText)
      return { ref, contentType: 'text/plain', description: `text, ${block.text.length.toLocaleString()} chars` }
    }
    if (block instanceof JsonBlock) {
      const { ref, byteLength } = await this._storeText(storage, key, jsonText, 'application/json', nativeText)
      return { ref, contentType: 'application/json', description: `json, ${byteLength.toLocaleString()} bytes` }
    }
    if (block instanceof ImageBlock || block instanceof VideoBlock || block instanceof DocumentBlock) {
      const bytes = getBytes(block)
      const contentType =
        block instanceof ImageBlock
          ? `image/${block.format}`
          : block instanceof VideoBlock
            ? `video/${block.format}`
            : `application/${block.format}`
      const label = block instanceof DocumentBlock ? block.name : contentType
      if (bytes) {
        const ref = await storeContent(storage, key, bytes, contentType)
        return { ref, contentType, description: `${label}, ${bytes.length.toLocaleString()} bytes` }
      }
      return { ref: '', contentType, description: `${label}, 0 bytes` }
    }
    logger.warn('unsupported content block type encountered during offloading, skipping')
    return { ref: '', contentType: 'unknown', description: 'unknown block type' }
  }

  /** The guidance paragraph of an offload preview (the SDK's wording). */
  _guidance() {
    let guidance =
      'Tool result was offloaded to external storage due to size.\n' +
      'Use the preview below if it answers your question.\n'
    if (this._includeRetrievalTool) {
      guidance +=
        'If you need more detail, use retrieve_offloaded_content with a reference and:\n' +
        '  - pattern: regex or keyword to find matching lines with context\n' +
        '  - line_range: { start, end } to read a specific span of lines\n' +
        'Retrieve full content (omit pattern/line_range) as a last resort.'
    } else {
      guidance += 'If you need more detail, use your available tools to access specific data.'
    }
    return guidance
  }

  /** The token figure of a header: `~N` for estimates (and always with the SDK's counters). */
  static _tokenFigure(measure) {
    return `${measure.approximate ? '~' : ''}${measure.tokens.toLocaleString()}`
  }

  _buildPreviewText(content, references, measure, preview) {
    const refLines = references
      .filter((r) => r.ref)
      .map((r) => `  ${r.ref} (${r.description})`)
      .join('\n')
    return (
      `[Offloaded: ${content.length} blocks, ${ContextOffloader._tokenFigure(measure)} tokens]\n` +
      `${this._guidance()}\n\n` +
      `${preview}\n\n` +
      `[Stored references:]\n${refLines}`
    )
  }

  /** The text that replaces a result whose storage failed (`onStorageError: 'truncate'`). */
  _buildTruncatedText(content, measure, preview, err) {
    const reason = String(err?.message ?? err).split('\n')[0].slice(0, 300)
    return (
      `[Truncated: ${content.length} blocks, ${ContextOffloader._tokenFigure(measure)} tokens. ` +
      `The full tool result could not be stored (${reason}), so everything after this preview was dropped; ` +
      'it cannot be retrieved.]\n\n' +
      preview
    )
  }

  /** Whether counting and previews run natively (a native tokenizer or a non-default preview). */
  _usesNativePreview() {
    return NATIVE_TOKENIZERS.includes(this._tokenizer) || this._previewMode !== 'head'
  }

  /**
   * Counts a tool result's tokens with the configured tokenizer and decides whether it
   * exceeds `maxResultTokens`. With a native tokenizer the decision stops as soon as
   * the threshold is passed; the exact (or, for long texts, estimated) total is only
   * computed once the result is known to be offloaded.
   * @returns {Promise<{ exceeds: boolean, tokens?: number, approximate?: boolean, compact: Map<number, string> }>}
   */
  async _decide(content, resultBlock, agent) {
    const compact = new Map()
    if (this._tokenizer === 'model') {
      const model = agent?.model
      const tokens = model
        ? await model.countTokens([new Message({ role: 'user', content: [resultBlock] })])
        : heuristicContentTokens(content)
      return { exceeds: tokens > this._maxResultTokens, tokens, approximate: true, compact }
    }
    if (this._tokenizer === 'heuristic') {
      const tokens = heuristicContentTokens(content)
      return { exceeds: tokens > this._maxResultTokens, tokens, approximate: true, compact }
    }
    const maxTokenBytes = await this._encodingReady
    const exceeds = await counting.exceedsLimit(content, this._tokenizer, this._maxResultTokens, maxTokenBytes, compact)
    return { exceeds, compact }
  }

  /** The header's token figure: the decision's count, or a native count of every block. */
  async _headerMeasure(content, decision) {
    if (decision.tokens !== undefined) return { tokens: decision.tokens, approximate: decision.approximate }
    await this._encodingReady
    return counting.contentTokens(content, this._tokenizer, this._exactCountLimit, decision.compact)
  }

  /**
   * Builds the preview natively: every text and JSON block is handed to native memory,
   * encoded as UTF-8 on a worker thread, and previewed in the configured mode within
   * `previewTokens` (native tokens, or 4 characters per token). Resolves with the preview
   * and the UTF-8 bytes of each block (by block index) for storing.
   */
  async _nativePreview(content, jsonTexts) {
    const builder = new native.PreviewBuilder()
    const indices = []
    for (const [i, block] of content.entries()) {
      if (block instanceof TextBlock && block.text) builder.add(await toNativeText(block.text), false)
      else if (block instanceof JsonBlock) builder.add(await toNativeText(jsonTexts.get(i)), true)
      else continue
      indices.push(i)
    }
    const nativeTokenizer = NATIVE_TOKENIZERS.includes(this._tokenizer)
    if (nativeTokenizer) await this._encodingReady
    const built = await builder.build({
      mode: this._previewMode,
      budget: nativeTokenizer ? this._previewTokens : this._previewTokens * CHARS_PER_TOKEN,
      encoding: nativeTokenizer ? this._tokenizer : undefined,
      cutLongLines: nativeTokenizer || this._previewMode !== 'head',
    })
    const utf8 = new Map(indices.map((blockIndex, k) => [blockIndex, built.texts[k]]))
    return { preview: built.preview, utf8 }
  }

  /**
   * Stores every block of `content` under `<keyPrefix>_<i>` and builds the replacement
   * content. Resolves with `null` when storing failed and the original is to be kept.
   */
  async _offloadBlocks(content, keyPrefix, agent, decision) {
    const jsonTexts = new Map()
    const textParts = []
    content.forEach((block, i) => {
      if (block instanceof TextBlock && block.text) textParts.push(block.text)
      else if (block instanceof JsonBlock) {
        const json = JSON.stringify(block.json, null, 2) ?? ''
        jsonTexts.set(i, json)
        textParts.push(json)
      }
    })
    let storage
    let storageError
    try {
      storage = this._storageForAgent(agent)
    } catch (err) {
      storageError = err
    }
    let preview
    let utf8 = new Map()
    let nativeTexts = new Map()
    const measurePromise = this._headerMeasure(content, decision)
    if (this._usesNativePreview()) {
      ;({ preview, utf8 } = await this._nativePreview(content, jsonTexts))
    } else {
      preview = textParts.length > 0 ? previewOf(textParts, this._previewTokens) : ''
      if (storage?.[NATIVE]) nativeTexts = await this._transferTexts(content, jsonTexts)
    }
    const measure = await measurePromise

    let references
    try {
      if (storageError) throw storageError
      references = await Promise.all(
        content.map((block, i) =>
          this._storeBlock(storage, block, `${keyPrefix}_${i}`, jsonTexts.get(i), nativeTexts.get(i), utf8.get(i)),
        ),
      )
      if (!isOffloaderStorage(storage)) {
        const storedAt = agent?.metrics?.cycleCount ?? 0
        for (const entry of references) if (entry.ref) this._keyStoredAt.set(entry.ref, storedAt)
      }
    } catch (err) {
      if (this._onStorageError === 'truncate') {
        logger.warn(`key=<${keyPrefix}> | failed to offload tool result, keeping only the preview`, err)
        const text = this._buildTruncatedText(content, measure, preview, err)
        return { text, content: [new TextBlock(text), ...mediaPlaceholders(content, [], 'dropped')], references: [], measure, truncated: true }
      }
      logger.warn(`tool_use_id=<${keyPrefix}> | failed to offload tool result, keeping original`, err)
      return null
    }
    logger.debug(`tool_use_id=<${keyPrefix}>, blocks=<${references.length}>, tokens=<${measure.tokens}> | tool result offloaded`)
    const text = this._buildPreviewText(content, references, measure, preview)
    return { text, content: [new TextBlock(text), ...mediaPlaceholders(content, references)], references, measure, truncated: false }
  }

  async _handleToolResult(event) {
    if (event.result.status === 'error') return
    // A delegated agent's result is its final answer: never replace it with a preview.
    if (isDelegatingAgentTool(event.tool)) return
    // The retrieval tool's own results are never offloaded (no circular offloading).
    if (this._includeRetrievalTool && event.toolUse.name === RETRIEVAL_TOOL_NAME) return
    if (this._neverOffload.has(event.toolUse.name)) return
    let forced
    if (this._shouldOffload) {
      try {
        forced = await this._shouldOffload(event.toolUse, event.result)
      } catch (err) {
        logger.warn(`tool_use_id=<${event.result.toolUseId}> | shouldOffload threw, using the size rule`, err)
      }
      if (forced === false) return
    }
    const content = event.result.content
    const toolUseId = event.result.toolUseId
    const decision = await this._decide(content, event.result, event.agent)
    if (!decision.exceeds && forced !== true) return
    const offloaded = await this._offloadBlocks(content, toolUseId, event.agent, decision)
    if (!offloaded) return
    event.result = new ToolResultBlock({ toolUseId, status: event.result.status, content: offloaded.content })
  }

  /**
   * Offloads content by hand (large user input, a file the app loaded): stores every
   * block under `<key>_<i>` and returns the preview text and references the plugin
   * would have put in the conversation. Always offloads, whatever the size.
   * @param {string | import('@strands-agents/sdk').ToolResultContent[]} content
   * @param {{ key: string, agent?: import('@strands-agents/sdk').LocalAgent }} options
   */
  async offload(content, options) {
    const key = options?.key
    if (typeof key !== 'string' || key.length === 0) throw new TypeError('offload() needs a non-empty string `key`')
    const blocks = toContentBlocks(content)
    const agent = options.agent ?? this._lastAgent?.deref()
    if (!this._storage) {
      throw new Error(
        'ContextOffloader.offload() needs a storage: pass `storage` in the config or add the plugin to an agent first',
      )
    }
    const resultBlock = new ToolResultBlock({ toolUseId: key, status: 'success', content: blocks })
    const decision = await this._decide(blocks, resultBlock, agent)
    const offloaded = await this._offloadBlocks(blocks, key, agent, decision)
    if (!offloaded) throw new Error(`offload failed: the content could not be stored (key ${key})`)
    const { text, references, measure, truncated } = offloaded
    return {
      text,
      content: offloaded.content,
      references: references.filter((r) => r.ref).map((r) => ({ reference: r.ref, contentType: r.contentType, description: r.description })),
      tokens: measure.tokens,
      approximate: measure.approximate,
      truncated,
    }
  }
}

/** SDK content blocks from what `offload()` accepts: a string, a block, or an array of blocks. */
function toContentBlocks(content) {
  if (typeof content === 'string') return [new TextBlock(content)]
  const list = Array.isArray(content) ? content : [content]
  return list.map((block) => {
    if (block instanceof TextBlock || block instanceof JsonBlock) return block
    if (block instanceof ImageBlock || block instanceof VideoBlock || block instanceof DocumentBlock) return block
    if (typeof block === 'string') return new TextBlock(block)
    if (block && typeof block === 'object') {
      try {
        // Plain data (`{ text }`, `{ json }`, `{ image }`, `{ video }`, `{ document }`), as the SDK reads it.
        return toolResultContentFromData(block)
      } catch {
        // Reported below.
      }
    }
    throw new TypeError('offload() content must be a string, or text/JSON/image/video/document blocks or their data')
  })
}

/** One placeholder text block per media block, as the SDK adds after the preview. */
function mediaPlaceholders(content, references, missing) {
  const out = []
  for (let i = 0; i < content.length; i++) {
    const block = content[i]
    if (block instanceof TextBlock || block instanceof JsonBlock) continue
    const ref = references[i]?.ref ?? ''
    const bytes = getBytes(block)
    const size = bytes ? bytes.length : 0
    let label
    if (block instanceof ImageBlock) label = `image: ${block.format}`
    else if (block instanceof VideoBlock) label = `video: ${block.format}`
    else if (block instanceof DocumentBlock) label = `document: ${block.format}, ${block.name}`
    if (!label) continue
    const suffix = ref ? ` | ref: ${ref}` : missing ? ` | ${missing}` : ''
    out.push(new TextBlock(`[${label}, ${size} bytes${suffix}]`))
  }
  return out
}

// ---------------------------------------------------------------------------
// Session snapshots: a native file-backed SnapshotStorage for the SDK's SessionManager.
// JSON is encoded and parsed here; every file operation runs in Rust on a worker thread.
// ---------------------------------------------------------------------------

const { join: joinPath } = await import('node:path')
const sdkErrors = await importSdkInternal('./errors.js')

/** The SDK's `SessionError` (not exported by its entry point), or a look-alike. */
const SessionError =
  sdkErrors?.SessionError ??
  class SessionError extends Error {
    constructor(message, options) {
      super(message, options)
      this.name = 'SessionError'
    }
  }

const SNAPSHOT_SCHEMA_VERSION = '1.0'

/** The SDK's `validateIdentifier`, with its message. */
function validateSnapshotIdentifier(id) {
  if (!/^[a-z0-9_-]+$/.test(id)) {
    throw new Error(`Identifier '${id}' can only contain lowercase letters, numbers, hyphens, and underscores`)
  }
  return id
}

/** The SDK's `validateScope`, with its message. */
function validateSnapshotScope(scope) {
  if (scope !== 'agent' && scope !== 'multiAgent') {
    throw new Error(`Invalid scope '${String(scope)}': must be 'agent' or 'multiAgent'`)
  }
  return scope
}

/** The SDK's `validateUuidV7`, with its message. */
function validateSnapshotUuidV7(id) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) {
    throw new Error(`'${id}' is not a valid UUID v7 snapshot ID`)
  }
}

/**
 * Session snapshots as files, in the layout of the SDK's session `FileStorage`
 * (`<baseDir>/<sessionId>/scopes/<scope>/<scopeId>/snapshots/`: `snapshot_latest.json`,
 * `manifest.json`, `immutable_history/snapshot_<uuid7>.json`), so either storage reads
 * what the other wrote. Every write goes to a temporary file in the same directory and
 * is renamed into place: a crash leaves the previous snapshot, never a torn one.
 *
 * Use it where the SDK's session `FileStorage` goes:
 * `new SessionManager({ sessionId, storage: { snapshot: new FileSnapshotStorage(dir) } })`
 * (passing the storage itself as `storage` works too).
 */
export class FileSnapshotStorage {
  #baseDir
  #native

  /**
   * @param {string | { baseDir: string, durable?: boolean }} options the base directory,
   *   or options; `durable: true` fsyncs every file and directory entry before a save resolves.
   */
  constructor(options) {
    const baseDir = typeof options === 'string' ? options : options?.baseDir
    if (typeof baseDir !== 'string' || baseDir.length === 0) {
      throw new TypeError('FileSnapshotStorage baseDir must be a non-empty string')
    }
    const durable = typeof options === 'object' && options !== null ? Boolean(options.durable) : false
    this.#baseDir = baseDir
    this.#native = new native.NativeSnapshotDir(baseDir, durable)
  }

  /** The base directory, as given. */
  get baseDir() {
    return this.#baseDir
  }

  /** This storage, so that it can be passed directly as `SessionManagerConfig.storage`. */
  get snapshot() {
    return this
  }

  /** Validates a location (as the SDK, in its order) and returns the file's path. */
  #pathOf(location, filename) {
    validateSnapshotIdentifier(location.sessionId)
    validateSnapshotScope(location.scope)
    validateSnapshotIdentifier(location.scopeId)
    return joinPath(this.#baseDir, location.sessionId, 'scopes', location.scope, location.scopeId, 'snapshots', filename)
  }

  /** `[kind, snapshotId, path]` of a snapshot file, validated as the SDK does. */
  #snapshotFile(location, snapshotId, latest) {
    if (latest) return ['latest', undefined, this.#pathOf(location, 'snapshot_latest.json')]
    validateSnapshotIdentifier(snapshotId)
    const path = this.#pathOf(location, `immutable_history/snapshot_${snapshotId}.json`)
    return ['history', String(snapshotId), path]
  }

  async #writeJSON(location, [kind, snapshotId, path], data) {
    try {
      const text = JSON.stringify(data, null, 2)
      await this.#native.write(location.sessionId, location.scope, location.scopeId, kind, snapshotId, text)
    } catch (error) {
      throw new SessionError(`Failed to write file ${path}`, { cause: error })
    }
  }

  async #readJSON(location, [kind, snapshotId, path]) {
    let text
    try {
      text = await this.#native.read(location.sessionId, location.scope, location.scopeId, kind, snapshotId)
    } catch (error) {
      throw new SessionError(`File system error reading ${path}`, { cause: error })
    }
    if (text === null) return null
    try {
      return JSON.parse(text)
    } catch (error) {
      throw new SessionError(`Invalid JSON in file ${path}`, { cause: error })
    }
  }

  /**
   * Saves a snapshot: to `snapshot_latest.json` when `isLatest`, else to
   * `immutable_history/snapshot_<snapshotId>.json`. Saves to one file land in call order.
   */
  async saveSnapshot(params) {
    const file = this.#snapshotFile(params.location, params.snapshotId, params.isLatest)
    await this.#writeJSON(params.location, file, params.snapshot)
  }

  /** Loads the latest snapshot, or the immutable one `snapshotId`; `null` when there is none. */
  async loadSnapshot(params) {
    const file = this.#snapshotFile(params.location, params.snapshotId, params.snapshotId === undefined)
    return this.#readJSON(params.location, file)
  }

  /**
   * Immutable snapshot ids of a scope in chronological (UUID v7) order: after the
   * exclusive cursor `startAfter`, at most `limit` of them.
   */
  async listSnapshotIds(params) {
    if (params.limit !== undefined && params.limit <= 0) return []
    if (params.startAfter) validateSnapshotUuidV7(params.startAfter)
    const { location } = params
    this.#pathOf(location, 'immutable_history')
    // `Array.prototype.slice` semantics for the page size: NaN -> 0, fractions truncated.
    let limit
    if (params.limit !== undefined) {
      const n = Math.trunc(Number(params.limit))
      limit = Number.isNaN(n) ? 0 : n
    }
    try {
      return await this.#native.listIds(
        location.sessionId,
        location.scope,
        location.scopeId,
        params.startAfter ? String(params.startAfter) : undefined,
        limit,
      )
    } catch (error) {
      throw new SessionError(`Failed to list snapshots for session ${location.sessionId}`, { cause: error })
    }
  }

  /** Removes every file of the session (`<baseDir>/<sessionId>/`); no-op when absent. */
  async deleteSession(params) {
    validateSnapshotIdentifier(params.sessionId)
    joinPath(this.#baseDir, params.sessionId)
    try {
      await this.#native.deleteSession(params.sessionId)
    } catch (error) {
      throw new SessionError(`Failed to delete session ${params.sessionId}`, { cause: error })
    }
  }

  /** The scope's manifest, or a fresh default (`schemaVersion` 1.0, now) when none was saved. */
  async loadManifest(params) {
    const file = ['manifest', undefined, this.#pathOf(params.location, 'manifest.json')]
    const manifest = await this.#readJSON(params.location, file)
    return manifest ?? { schemaVersion: SNAPSHOT_SCHEMA_VERSION, updatedAt: new Date().toISOString() }
  }

  /** Saves the scope's manifest atomically. */
  async saveManifest(params) {
    const file = ['manifest', undefined, this.#pathOf(params.location, 'manifest.json')]
    await this.#writeJSON(params.location, file, params.manifest)
  }
}

// ── S3SnapshotStorage ─────────────────────────────────────────────────────────────

/**
 * Runs a native snapshot request; failures (`<message>\0<cause>`) become the SDK's
 * `SessionError`, rejected identifiers stay plain errors with the SDK's message.
 */
async function snapshotCall(run) {
  try {
    return await run()
  } catch (err) {
    const text = String(err?.message ?? err)
    const split = text.lastIndexOf('\u0000')
    if (split < 0) throw err
    const cause = text.slice(split + 1)
    throw new SessionError(text.slice(0, split), cause ? { cause: new Error(cause) } : undefined)
  }
}

/**
 * Session snapshots as objects of one S3 bucket, in the layout of the SDK's session
 * `S3Storage` (`[<prefix>/]<sessionId>/scopes/<scope>/<scopeId>/snapshots/`:
 * `snapshot_latest.json`, `manifest.json`, `immutable_history/snapshot_<uuid7>.json`,
 * JSON with two-space indentation and `Content-Type: application/json`), so sessions
 * written by either storage load in the other. Requests run natively with the same
 * timeouts, retries and in-flight cap as {@link S3Storage}.
 */
export class S3SnapshotStorage {
  #native
  #bucket
  #prefix

  /** @param {import('./index.d.ts').S3SnapshotStorageOptions} options */
  constructor(options) {
    const { bucket, prefix, region, endpoint, forcePathStyle, credentials, timeoutMs, maxAttempts, maxInFlight } =
      options ?? {}
    if (typeof bucket !== 'string' || bucket.length === 0) {
      throw new TypeError('S3SnapshotStorage bucket must be a non-empty string')
    }
    this.#bucket = bucket
    this.#prefix = prefix ?? ''
    this.#native = new native.NativeS3SnapshotStore(bucket, {
      prefix: this.#prefix,
      region: region ?? 'us-east-1',
      endpoint,
      forcePathStyle,
      credentials,
      timeoutMs,
      maxAttempts,
      maxInFlight,
    })
  }

  /** The bucket written to. */
  get bucket() {
    return this.#bucket
  }

  /** The key prefix, as given (`''` when none). */
  get prefix() {
    return this.#prefix
  }

  /** This storage, so that it can be passed directly as `SessionManagerConfig.storage`. */
  get snapshot() {
    return this
  }

  /** The object key of a file, validated as the SDK does (snapshot id first, then location). */
  #key(location, kind, snapshotId) {
    return this.#native.objectKey(location.sessionId, location.scope, location.scopeId, kind, snapshotId)
  }

  async #writeJSON(key, data) {
    const text = JSON.stringify(data, null, 2)
    await snapshotCall(() => this.#native.write(key, text))
  }

  async #readJSON(key) {
    const { text } = await snapshotCall(() => this.#native.read(key))
    if (text == null) return null
    try {
      return JSON.parse(text)
    } catch (error) {
      throw new SessionError(`Invalid JSON in S3 object ${key}`, { cause: error })
    }
  }

  /**
   * Saves a snapshot: to `snapshot_latest.json` when `isLatest`, else to
   * `immutable_history/snapshot_<snapshotId>.json`.
   */
  async saveSnapshot(params) {
    const key = params.isLatest
      ? this.#key(params.location, 'latest')
      : this.#key(params.location, 'history', String(params.snapshotId))
    await this.#writeJSON(key, params.snapshot)
  }

  /** Loads the latest snapshot, or the immutable one `snapshotId`; `null` when there is none. */
  async loadSnapshot(params) {
    const key =
      params.snapshotId === undefined
        ? this.#key(params.location, 'latest')
        : this.#key(params.location, 'history', String(params.snapshotId))
    return this.#readJSON(key)
  }

  /**
   * Immutable snapshot ids of a scope in chronological (UUID v7) order: after the
   * exclusive cursor `startAfter`, at most `limit` (`StartAfter`/`MaxKeys` pushed down to S3).
   */
  async listSnapshotIds(params) {
    if (params.limit !== undefined && params.limit <= 0) return []
    if (params.startAfter) validateSnapshotUuidV7(params.startAfter)
    const { location } = params
    let limit
    if (params.limit !== undefined) {
      const n = Math.trunc(Number(params.limit))
      limit = Number.isNaN(n) ? 0 : n
    }
    return snapshotCall(() =>
      this.#native.listIds(
        location.sessionId,
        location.scope,
        location.scopeId,
        params.startAfter ? String(params.startAfter) : undefined,
        limit,
      ),
    )
  }

  /** Deletes every object of the session (`[<prefix>/]<sessionId>/`), 1,000 per request. */
  async deleteSession(params) {
    await snapshotCall(() => this.#native.deleteSession(params.sessionId))
  }

  /** The scope's manifest, or a fresh default (`schemaVersion` 1.0, now) when none was saved. */
  async loadManifest(params) {
    const manifest = await this.#readJSON(this.#key(params.location, 'manifest'))
    return manifest ?? { schemaVersion: SNAPSHOT_SCHEMA_VERSION, updatedAt: new Date().toISOString() }
  }

  /** Saves the scope's manifest. */
  async saveManifest(params) {
    await this.#writeJSON(this.#key(params.location, 'manifest'), params.manifest)
  }
}
