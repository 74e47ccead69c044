// The offload engine every adapter shares, with no agent framework in it: the offload
// decision (token counting against `maxResultTokens`), a result's way through storing
// (preview, store every block, record the manifest, build the replacement text), the
// counters, and the retrieval answers. What is about one framework (which storage and
// session serve a call, how its model counts tokens, cycle eviction, its block classes)
// the adapter passes in.
import { blockTexts, getBytes, mediaPlaceholders, textBlock } from './content.js'
import { counting, heuristicContentTokens } from './counting.js'
import { INLINE_LATIN1_UNITS, SHORT_TEXT_UNITS, native } from './native.js'
import { CHARS_PER_TOKEN } from './options.js'
import { headPreview, headPreviewOf, nativePreview, offloadedText, offloadedTextOfOne, truncatedText } from './preview.js'
import { MANIFEST_NAMESPACE, OffloadManifest, manifestEntries } from './manifest.js'
import { holdStates, sweepManifestSoon } from './manifest-sweep.js'
import { MAX_OUTPUT_UNITS, Retrieval } from './retrieval.js'
import { OffloaderCounters } from './telemetry.js'
import { countTokensSync } from './tokens.js'
import { describe as describeValue } from './numbers.js'
import { logger } from './sdk.js'
import { charsDescription, discardStored, inlineByteLength, inlineReference, storeBlocks, storeShortTextNow, transferTexts } from './store-blocks.js'
import { NATIVE, nativeFor } from './storage/native-backed.js'
import { BUDGET, CLOCK, syncClock } from './lifecycle.js'
import { isOffloaderStorage } from './storage/unified.js'

/**
 * `values` when none is a promise (the caller need not wait at all), else
 * `Promise.all(values)`.
 * @template T
 * @param {Array<T | Promise<T>>} values
 * @returns {T[] | Promise<T[]>}
 */
function settled(values) {
  return values.some((v) => v instanceof Promise) ? Promise.all(values) : values
}

/**
 * An offload decision: whether the result exceeds `maxResultTokens`, its tokens when they
 * were counted whole (with `approximate` for estimates), and the compact JSON of the
 * blocks a native count serialised (by block index).
 * @typedef {{ exceeds: boolean, tokens?: number, approximate?: boolean, compact: Map<number, string> }} Decision
 */

/** The identity, for blocks kept as the engine makes them. */
const same = (block) => block
/** Most stores whose size is counted later (see `OffloaderCounters.countPending`) before they are counted. */
const MAX_UNCOUNTED = 1024

/**
 * One adapter's engine: its validated options (see ./options.js), its counters, its
 * manifest and its tokenizer. `storage` is set by the adapter (at construction, or when
 * the agent it serves is known) before anything is offloaded.
 */
export class OffloadEngine {
  /** The validated options. */
  options
  /** Counters returned by `stats()`. */
  counters = new OffloaderCounters()
  /** Resolves with the native encoding's longest token in bytes (native tokenizers only). */
  encodingReady
  /** The storage the manifest is kept in (the adapter's, before any per-agent view). */
  storage
  /** What was offloaded per session (opaque references, `list`); created with the storage. */
  _manifest

  /** @param {ReturnType<import('./options.js').resolveOptions>} options */
  constructor(options) {
    this.options = options
    this._shortTextPath =
      (options.tokenizer === 'model' || options.tokenizer === 'heuristic') &&
      options.previewMode === 'head' &&
      !options.opaqueReferences &&
      !options.extendedRetrieval &&
      options.ttlMs === undefined
    if (options.nativeTokenizer) {
      // The vocabulary loads on a worker thread while the agent starts.
      this.encodingReady = native.loadEncoding(options.tokenizer)
      this.encodingReady.catch(() => {})
    }
  }

  /** Whether offloads are recorded in a manifest (opaque references or extended retrieval). */
  keepsManifest() {
    return this.options.opaqueReferences || this.options.extendedRetrieval
  }

  /** The manifest, kept in the engine's storage when it has a key-value side. */
  manifestOf() {
    if (this._manifest) return this._manifest
    const storage = this.storage
    let persisted
    try {
      if (storage && typeof storage.namespace === 'function' && typeof storage.write === 'function') {
        persisted = storage.namespace(MANIFEST_NAMESPACE)
      }
    } catch (err) {
      logger.warn('the offload manifest is kept in memory only: its storage namespace failed', err)
    }
    // Our storages tell which references they still hold: `list` shows only those.
    const holds =
      typeof storage?.[NATIVE]?.holdsEach === 'function'
        ? (refs) => {
            // Read again at each use: an in-memory storage first copies the texts it
            // has not copied yet (see ./storage/pending-texts.js).
            const nativeStore = storage[NATIVE]
            // Judged by the storage's clock (an injected `clock` included).
            syncClock(storage, nativeStore)
            return holdStates(nativeStore, refs)
          }
        : undefined
    this._manifest = new OffloadManifest(persisted, holds)
    return this._manifest
  }

  /**
   * Counts a result's tokens with the configured tokenizer and decides whether it
   * exceeds `maxResultTokens`. With `tokenizer: 'model'` or `'heuristic'`, `modelCount`
   * (the adapter's model, when it has one) counts, else the SDK's heuristic. With a
   * native tokenizer the decision stops as soon as the threshold is passed; the exact
   * (or, for long texts, estimated) total is only computed once the result is known to
   * be offloaded.
   * The SDK's heuristic decides right away: the decision is then returned as it is, not
   * as a promise (the caller need not wait; see {@link settled}).
   * @param {unknown[]} content - the result's blocks
   * @param {(() => Promise<number>) | undefined} [modelCount]
   * @returns {Decision | Promise<Decision>}
   */
  decide(content, modelCount) {
    const { tokenizer, maxResultTokens } = this.options
    if (tokenizer === 'model' || tokenizer === 'heuristic') {
      const decision = (tokens) => ({ exceeds: tokens > maxResultTokens, tokens, approximate: true, compact: new Map() })
      // A model's count may be a number or a promise, and may throw: always a promise here.
      return modelCount ? new Promise((resolve) => resolve(modelCount())).then(decision) : decision(heuristicContentTokens(content))
    }
    return this._decideNatively(content)
  }

  /** {@link OffloadEngine.decide} with a native tokenizer. */
  async _decideNatively(content) {
    const compact = new Map()
    const { tokenizer, maxResultTokens } = this.options
    // Token counts are whole: `tokens > 2500.5` is `tokens > 2500`; nothing exceeds Infinity.
    if (maxResultTokens === Infinity) return { exceeds: false, compact }
    const limit = Math.floor(maxResultTokens)
    const maxTokenBytes = await this.encodingReady
    const exceeds = await counting.exceedsLimit(content, tokenizer, limit, maxTokenBytes, compact)
    return { exceeds, compact }
  }

  /**
   * The header's token figure: the decision's count (right away), or a native count of
   * every block (a promise).
   */
  _headerMeasure(content, decision) {
    if (decision.tokens !== undefined) return { tokens: decision.tokens, approximate: decision.approximate }
    return this.encodingReady.then(() =>
      counting.contentTokens(content, this.options.tokenizer, this.options.exactCountLimit, decision.compact),
    )
  }

  /**
   * The preview of a result's texts and, when built natively, their UTF-8 for storing.
   * The SDK's head preview of short texts is returned right away; the rest as a promise.
   */
  _preview(content, texts, storage) {
    const { nativeTokenizer, previewMode, tokenizer, previewTokens, headShare } = this.options
    if (nativeTokenizer || previewMode !== 'head') {
      const encoding = nativeTokenizer ? tokenizer : undefined
      const built = nativePreview(content, texts, {
        mode: previewMode,
        previewTokens,
        headShare,
        encoding,
        encodingReady: this.encodingReady,
      })
      return built.then((b) => ({ ...b, nativeTexts: new Map() }))
    }
    const preview = texts.size > 0 ? headPreview([...texts.values()], previewTokens) : ''
    // Native storages take the texts from native memory (handed over in slices, off the event loop).
    // Long texts go to native memory now, in slices with yields (short ones as strings when stored).
    const long = nativeFor(storage, 'store') && [...texts.values()].some((t) => t.length > SHORT_TEXT_UNITS)
    if (!long) return { preview, utf8: new Map(), nativeTexts: new Map() }
    return transferTexts(texts).then((nativeTexts) => ({ preview, utf8: new Map(), nativeTexts }))
  }

  /**
   * Stores every block of `content` under `<keyPrefix>_<i>` and builds the replacement:
   * `{ text, content, references, measure, truncated, bytes }`, where `content` is the
   * replacement text block and the media placeholders, as plain blocks (see
   * ./content.js). Resolves with `null` when storing failed and the original is kept.
   * @param {unknown[]} content - the result's blocks
   * @param {string} keyPrefix
   * @param {Awaited<ReturnType<OffloadEngine['decide']>>} decision
   * @param {object} place - where and for whom it is stored (plain data: no closures per offload)
   * @param {object} [place.storage] - the storage to store in
   * @param {unknown} [place.storageError] - why there is none (the offload fails as a storage failure)
   * @param {string} place.session - the manifest session the references are issued in
   * @param {string} place.toolName
   * @param {number | null | undefined} place.ttl - the lifetime (ms) of what is stored
   * @param {object} [place.host] - the adapter, told of what a non-offloader (unified)
   *   storage got (`host.offloadStored(place, references)`) and of the manifest entries
   *   recorded (`host.offloadRecorded(place, session, entries)`)
   * @param {(block: object) => object} [place.toBlock] - the adapter's block for each of
   *   the engine's replacement blocks (default: the engine's plain blocks)
   */
  async offloadBlocks(content, keyPrefix, decision, place) {
    // A typed array would map each block's outcome to a number, and lose a rejected store.
    if (!Array.isArray(content)) throw new TypeError(`content must be an array of blocks, got ${describeValue(content)}`)
    const texts = blockTexts(content)
    const { storage } = place
    let { storageError } = place
    try {
      if (storage?.[NATIVE]) syncClock(storage, storage[NATIVE])
    } catch (err) {
      storageError ??= err
    }
    // Counting and previewing run side by side; if either fails, both are awaited (no
    // rejection is left unhandled). Small results need neither to wait.
    const prepared = settled([this._preview(content, texts, storage), this._headerMeasure(content, decision)])
    const [{ preview, utf8, nativeTexts }, measure] = prepared instanceof Promise ? await prepared : prepared

    // Bytes per block as the stores report them; before storing (a byte budget's check)
    // from the native UTF-8 or native text when there is one, a pass over the string
    // only for a short text.
    const bytesOfBlock = (block, i) => {
      const text = texts.get(i)
      if (text === undefined) return getBytes(block)?.length ?? 0
      return utf8.get(i)?.byteLength ?? nativeTexts.get(i)?.utf8Length ?? Buffer.byteLength(text, 'utf8')
    }
    const bytesOf = () => content.map(bytesOfBlock)
    const { includeRetrievalTool } = this.options
    let references
    let bytes
    try {
      if (storageError) throw storageError
      const storing = storeBlocks(storage, content, keyPrefix, { texts, nativeTexts, utf8, bytesOf })
      references = storing instanceof Promise ? await storing : storing
      // A block that was not stored (nothing to store, kept inline) reports no length.
      bytes = references.map((r, i) => r.byteLength ?? (r.ref ? bytesOfBlock(content[i], i) : 0))
      if (this.keepsManifest()) {
        references = await this._recordManifest(content, texts, references, bytes, keyPrefix, measure, place).catch((err) => {
          discardStored(storage, references)
          throw err
        })
        // A store under a byte budget may have evicted artifacts listed in the manifest.
        if (storage?.[BUDGET] !== undefined) sweepManifestSoon(storage[NATIVE])
      }
      if (!isOffloaderStorage(storage)) place.host?.offloadStored?.(place, references)
    } catch (err) {
      const text = this._storeFailed(content.length, keyPrefix, measure, preview, err)
      if (text === null) return null
      const replacement = [textBlock(text), ...mediaPlaceholders(content, [], 'dropped')].map(place.toBlock ?? same)
      return { text, content: replacement, references: [], measure, truncated: true }
    }
    logger.debug(`tool_use_id=<${keyPrefix}>, blocks=<${references.length}>, tokens=<${measure.tokens}> | tool result offloaded`)
    const text = offloadedText(content.length, references, measure, preview, includeRetrievalTool)
    const replacement = [textBlock(text), ...mediaPlaceholders(content, references)].map(place.toBlock ?? same)
    const stored = references.filter((r) => r.ref)
    this.counters.offloads += 1
    this.counters.blocksStored += stored.length
    this.counters.bytesOffloaded += bytes.reduce((a, b) => a + b, 0)
    this.counters.tokensBefore += measure.tokens
    this.counters.tokensAfter += this.tokensOf(text)
    return { text, content: replacement, references, measure, truncated: false, bytes }
  }

  /**
   * For a result that is one text block: whether it exceeds `maxResultTokens` by the
   * decision of {@link offloadShortText} (`false`: it stays as it is), or `undefined`
   * when that path does not apply to it (the caller takes the general path).
   * @param {string} text
   * @returns {boolean | undefined}
   */
  shortTextOverLimit(text) {
    if (!this._shortTextPath || text.length > INLINE_LATIN1_UNITS) return undefined
    return Math.ceil(text.length / CHARS_PER_TOKEN) > this.options.maxResultTokens
  }

  /**
   * The offload of a result that is one text block that can be stored right away (most
   * results; see `storeShortTextNow`), decided by the SDK's heuristic, into one of our
   * storages with no clock or byte budget, under options that keep no manifest, no
   * lifetime and a head preview: the same decision, store, counters and replacement text
   * as {@link decide} and {@link offloadBlocks}, in one synchronous pass over far less
   * code. (After a garbage collection every function an offload runs is cold, at
   * microseconds each; the general path runs three dozen.)
   * @param {string} text - the block's text
   * @param {string} keyPrefix
   * @param {object} storage - the storage the general path would store in
   * @returns {string | null | undefined} the replacement text (the truncated preview
   *   when the store failed and `onStorageError` is `'truncate'`); `null` when the result
   *   stays as it is (within `maxResultTokens`, or the store failed); `undefined` when
   *   this path does not apply or the store did not happen right away (the caller takes
   *   the general path)
   */
  offloadShortText(text, keyPrefix, storage) {
    const over = this.shortTextOverLimit(text)
    if (!over) return over === false ? null : undefined
    if (storage === null || (typeof storage !== 'object' && typeof storage !== 'function')) return undefined
    if (storage[CLOCK] !== undefined || storage[BUDGET] !== undefined || !isOffloaderStorage(storage)) return undefined
    const { previewTokens, includeRetrievalTool } = this.options
    const tokens = Math.ceil(text.length / CHARS_PER_TOKEN)
    let outcome
    try {
      outcome = storeShortTextNow(storage, text, `${keyPrefix}_0`, this.counters.uncounted)
    } catch (err) {
      // Nothing was stored (a store that throws stores nothing): as the general path.
      return this._storeFailed(1, keyPrefix, { tokens, approximate: true }, headPreviewOf(text, previewTokens), err)
    }
    if (outcome === undefined) return undefined
    const preview = headPreviewOf(text, previewTokens)
    const replacement = offloadedTextOfOne(inlineReference(outcome), charsDescription(text.length), tokens, preview, includeRetrievalTool)
    logger.debug(`tool_use_id=<${keyPrefix}>, blocks=<1>, tokens=<${tokens}> | tool result offloaded`)
    const { counters } = this
    counters.offloads += 1
    counters.blocksStored += 1
    // Zero for a text not copied yet: its size is counted later (see `countPending`).
    counters.bytesOffloaded += inlineByteLength(outcome)
    if (counters.uncounted.length >= MAX_UNCOUNTED) counters.countPending()
    counters.tokensBefore += tokens
    counters.tokensAfter += Math.ceil(replacement.length / CHARS_PER_TOKEN)
    return replacement
  }

  /**
   * Counts and logs an offload whose storing failed, and returns the text that replaces
   * the result: its preview marked as truncated (`onStorageError: 'truncate'`), or
   * `null` when the original is kept.
   */
  _storeFailed(blockCount, keyPrefix, measure, preview, err) {
    this.counters.errors.offload += 1
    if (this.options.onStorageError === 'truncate') {
      logger.warn(`key=<${keyPrefix}> | failed to offload tool result, keeping only the preview`, err)
      // Opaque references promise that no storage detail (a path, a bucket) reaches the model.
      const reason = this.options.opaqueReferences ? new Error('the storage failed') : err
      return truncatedText(blockCount, measure, preview, reason)
    }
    logger.warn(`tool_use_id=<${keyPrefix}> | failed to offload tool result, keeping original`, err)
    return null
  }

  /** Tokens of a text the model sees: exact with a native tokenizer, else 4 characters per token. */
  tokensOf(text) {
    const { nativeTokenizer, tokenizer } = this.options
    if (nativeTokenizer) {
      try {
        return countTokensSync(text, tokenizer)
      } catch {
        // The vocabulary failed to load: the heuristic below.
      }
    }
    return Math.ceil(text.length / CHARS_PER_TOKEN)
  }

  /**
   * Records what an offload stored in the session's manifest and returns the references
   * as the model is to see them: opaque ids (with `storageRef`, the storage's reference),
   * or the storage references themselves.
   */
  async _recordManifest(content, texts, references, bytes, keyPrefix, measure, place) {
    const { entries, shown } = manifestEntries(content, texts, references, bytes, measure, {
      keyPrefix,
      toolName: place.toolName,
      ttl: place.ttl,
      opaque: this.options.opaqueReferences,
    })
    const { session } = place
    try {
      await this.manifestOf().record(session, entries)
    } catch (err) {
      // Every id is stored or none is: an id whose entry is missing would never resolve.
      await this.manifestOf().forget(session, entries)
      throw err
    }
    place.host?.offloadRecorded?.(place, session, entries)
    return shown
  }

  /**
   * The retrieval tool's answers for this engine.
   * @param {object} where - what the adapter knows of a tool call
   * @param {(context: unknown) => object} where.storageFor - the storage serving a call
   * @param {(context: unknown) => string[]} where.sessionsOf - the manifest sessions a call reads
   * @param {(reference: string, context: unknown) => void} [where.onUse] - told of every
   *   storage reference a call reads
   * @param {boolean} [where.parseJson=true] - a full retrieval of JSON answers it parsed
   */
  retrieval({ storageFor, sessionsOf, onUse, parseJson = true }) {
    const { extendedRetrieval, opaqueReferences, nativeTokenizer, tokenizer, maxResultTokens } = this.options
    return new Retrieval({
      storageFor,
      sessionsOf,
      manifestOf: () => this.manifestOf(),
      opaque: opaqueReferences,
      extended: extendedRetrieval,
      // The SDK's budget (slicing floors it), within what the native search takes.
      maxChars: Math.min(Math.floor(maxResultTokens * CHARS_PER_TOKEN), MAX_OUTPUT_UNITS),
      maxResultTokens,
      encoding: nativeTokenizer ? tokenizer : undefined,
      encodingReady: this.encodingReady,
      counters: this.counters,
      onUse,
      parseJson,
    })
  }
}
