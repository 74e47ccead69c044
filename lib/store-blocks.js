// Storing the blocks of an offloaded result: each block's bytes and content type, and the
// description the preview lists next to its reference. Native storages take text already
// in native memory, or UTF-8 already encoded by a native preview, without another copy;
// any other storage gets bytes.
//
// Every native store is requested synchronously when `storeBlock` is called (before its
// first `await`), so blocks stored with `Promise.all` are numbered in block order, as the
// SDK numbers them.
import { getBytes, isJson, isMedia, isText, isTextual, mediaContentType, staysInline } from './content.js'
import { BEYOND_LATIN1, INLINE_LATIN1_UNITS, SHORT_TEXT_UNITS, asUint8Array, mustYield, toBytes, toNativeText, toNativeTextNow, waitForTurn } from './native.js'
import { BUDGET } from './lifecycle.js'
import { localeCount } from './numbers.js'
import { logger } from './sdk.js'
import { NATIVE, NativeBackedStorage, OPENING, PENDING, PLUGIN_VIEW, nativeFor } from './storage/native-backed.js'
import { isOffloaderStorage, storeContent } from './storage/unified.js'

/**
 * Hands every long text (by block index) to native memory, in order, yielding to the
 * event loop between slices; short ones go over when they are stored, in one call.
 * @param {Map<number, string>} texts
 * @returns {Promise<Map<number, object>>}
 */
export async function transferTexts(texts) {
  const nativeTexts = new Map()
  for (const [i, text] of texts) if (text.length > SHORT_TEXT_UNITS) nativeTexts.set(i, await toNativeText(text))
  return nativeTexts
}

/** Calls a native store method now, or its worker-thread form when it cannot run inline. */
async function storeNatively(storage, nativeStore, method, key, payload, contentType) {
  const args = [key, payload, contentType, storage[PLUGIN_VIEW]]
  return nativeStore[`${method}Now`](...args) ?? (await nativeStore[method](...args))
}

/** The description of a stored text block of `length` UTF-16 units. */
export const charsDescription = (length) => `text, ${localeCount(length)} chars`

/** The description of a stored text or JSON block. */
function textDescription(block, byteLength) {
  return isText(block) ? charsDescription(block.text.length) : `json, ${localeCount(byteLength)} bytes`
}

/**
 * Stores one block under `key`. A text or JSON block is stored from `encoded` (its
 * UTF-8 from a native preview) when given, else from `nativeText` (its text in native
 * memory) or, when short, from `text` as a string, when the storage is native, else
 * from `text` encoded here. A short text a native storage can take right away is
 * stored before this returns, and the result is returned as a plain value (no promise,
 * no wait): most offloads are small.
 * @returns {{ ref: string, contentType: string, description: string, byteLength?: number } | Promise<{ ref: string, contentType: string, description: string, byteLength?: number }>}
 *   `ref` is empty for blocks that hold nothing to store (S3 or URL sources);
 *   `byteLength` is what was stored, in bytes.
 */
export function storeBlock(storage, block, key, parts) {
  const { text, nativeText, encoded } = parts
  if (!encoded && !nativeText && isTextual(block) && text.length <= SHORT_TEXT_UNITS) {
    const stored = storeTextNow(storage, text, key, isText(block) ? 'text/plain' : 'application/json')
    if (stored) return { ...stored, description: textDescription(block, stored.byteLength) }
  }
  return storeBlockLater(storage, block, key, parts)
}

/**
 * Stores a short text (at most `SHORT_TEXT_UNITS` units) right away when `storage` is one
 * of ours that can take it inline; `undefined` when it cannot (nothing was stored).
 * @returns {{ ref: string, contentType: string, byteLength: number } | undefined}
 */
function storeTextNow(storage, text, key, contentType) {
  const outcome = storeTextNowRaw(storage, text, key, contentType)
  if (!outcome) return undefined
  // The native store says how many bytes it stored (no pass over the string here).
  return { ref: inlineReference(outcome), contentType, byteLength: inlineByteLength(outcome) }
}

/** The native store's answer to an inline text store (see `storeLatin1Now`), or `undefined`. */
function storeTextNowRaw(storage, text, key, contentType) {
  // Strings of characters below U+0100 go over as their bytes (V8 copies them as they
  // are); others as UTF-16. Either way the UTF-8 encoding is native and SIMD. (An S3
  // store has neither method: its stores go over the network.)
  const method = BEYOND_LATIN1.test(text) ? 'storeUtf16Now' : 'storeLatin1Now'
  return nativeFor(storage, 'store')?.[method]?.(key, text, contentType, storage[PLUGIN_VIEW]) ?? undefined
}

/**
 * {@link storeBlock} of a text block's `text` when it can be stored right away: at most
 * `SHORT_TEXT_UNITS` units on a storage whose directory, if any, is open, and in memory
 * also a text of characters below U+0100 of at most `INLINE_LATIN1_UNITS`; `undefined`
 * otherwise (nothing was stored). Answers as the native store does, with one string
 * (`<UTF-8 bytes stored>:<reference>`, read with {@link inlineReference} and
 * {@link inlineByteLength}): after a full garbage collection every new object shape is
 * built again, at microseconds each. An in-memory storage that keeps the text pending
 * (see ./storage/pending-texts.js) leaves the size out (`:<reference>`) when `uncounted`
 * is given, and records the store there, to be counted later.
 * @param {object} storage
 * @param {string} text
 * @param {string} key
 * @param {unknown[][]} [uncounted] - see `OffloaderCounters.uncounted`
 * @returns {string | undefined}
 */
export function storeShortTextNow(storage, text, key, uncounted) {
  const opening = storage[OPENING]
  if (opening && (opening.pending || storage[NATIVE].isOpen === false)) return undefined
  if (text.length > SHORT_TEXT_UNITS && (opening || text.length > INLINE_LATIN1_UNITS || BEYOND_LATIN1.test(text))) return undefined
  // An in-memory storage with no lifecycle (but a TTL) numbers the text now and copies it when it
  // is next used (see ./storage/pending-texts.js), unless its `store` is overridden.
  if (Object.hasOwn(storage, PENDING) && storage.store === NativeBackedStorage.prototype.store) {
    const outcome = storage[PENDING].add(text, key, 'text/plain', uncounted)
    if (outcome !== undefined) return outcome
  }
  return storeTextNowRaw(storage, text, key, 'text/plain')
}

/** The reference in an inline store's answer (see {@link storeShortTextNow}). */
export function inlineReference(outcome) {
  return outcome.slice(outcome.indexOf(':') + 1)
}

/** The UTF-8 bytes stored, from an inline store's answer (see {@link storeShortTextNow}); 0 when left out. */
export function inlineByteLength(outcome) {
  return Number(outcome.slice(0, outcome.indexOf(':')))
}

/** {@link storeBlock} for what it cannot store right away. */
async function storeBlockLater(storage, block, key, { text, nativeText, encoded }) {
  if ((isText(block) && block.text) || isJson(block)) {
    const contentType = isText(block) ? 'text/plain' : 'application/json'
    let ref
    let byteLength
    const nativeStore = nativeFor(storage, 'store')
    if (encoded) {
      byteLength = encoded.byteLength
      ref =
        typeof nativeStore?.storeEncoded === 'function'
          ? (await storeNatively(storage, nativeStore, 'storeEncoded', key, encoded, contentType)).reference
          : await storeContent(storage, key, asUint8Array(encoded.toBuffer()), contentType)
    } else if (nativeStore && (nativeText || text.length <= SHORT_TEXT_UNITS)) {
      // Long texts were handed over (without blocking) as NativeTexts; a short one
      // that could not be stored right away goes over now.
      const outcome = await storeNatively(storage, nativeStore, 'storeText', key, nativeText ?? toNativeTextNow(text), contentType)
      ;({ reference: ref, byteLength } = outcome)
    } else {
      const bytes = new TextEncoder().encode(text)
      byteLength = bytes.length
      ref = await storeContent(storage, key, bytes, contentType)
    }
    return { ref, contentType, description: textDescription(block, byteLength), byteLength }
  }
  if (!isMedia(block)) {
    // An empty text block has nothing to store (as in the SDK); a block of another kind
    // stays in the conversation as it is.
    logger.warn('unsupported content block type encountered during offloading, skipping')
    return { ref: '', contentType: 'unknown', description: 'unknown block type' }
  }
  if (staysInline(block)) {
    // S3 locations and URLs stay in the conversation as they are.
    return { ref: '', contentType: mediaContentType(block), description: 'kept inline' }
  }
  const bytes = getBytes(block)
  const contentType = mediaContentType(block)
  const label = block.type === 'documentBlock' ? block.name : contentType
  // Our own store numbers the block now, in block order, as text blocks are numbered
  // (its `store()` may first yield to the event loop, letting a later block go first).
  const nativeStore = nativeFor(storage, 'store')
  const ref = nativeStore
    ? (await storeNatively(storage, nativeStore, 'storeBytes', key, toBytes(bytes), contentType)).reference
    : await storeContent(storage, key, bytes, contentType)
  return { ref, contentType, description: `${label}, ${localeCount(bytes.length)} bytes`, byteLength: bytes.length }
}

/**
 * Stores every block of one result (block `i` under `<keyPrefix>_<i>`) and returns one
 * `{ ref, contentType, description }` per block. The blocks stand or fall together:
 * when one cannot be stored, those stored already are removed and the error is thrown.
 * On a storage with a byte budget (`maxBytes`), blocks that together exceed it are
 * refused before any is stored, and once all are stored each is checked to be still
 * held (a concurrent store may have evicted one to make room); if one is not, the rest
 * are removed and the offload fails, so no reference handed out is already gone.
 * Stores that can run right away do, and then the references are returned as they are
 * (no promise); otherwise, and on any failure, a promise (rejected with the failure).
 * @param {object} storage
 * @param {unknown[]} content - the result's blocks
 * @param {string} keyPrefix
 * @param {{ texts: Map<number, string>, nativeTexts: Map<number, object>, utf8: Map<number, object>, bytesOf: () => number[] }} parts
 *   `bytesOf` gives each block's bytes before storing (asked only under a byte budget)
 */
export function storeBlocks(storage, content, keyPrefix, parts) {
  try {
    return storeBlocksNow(storage, content, keyPrefix, parts)
  } catch (err) {
    return Promise.reject(err)
  }
}

/** {@link storeBlocks}, throwing what it cannot store right away. */
function storeBlocksNow(storage, content, keyPrefix, parts) {
  const budget = storage?.[BUDGET]
  const stores = budget === undefined ? 0 : content.filter((block) => isTextual(block) || (isMedia(block) && !staysInline(block))).length
  if (stores > 1) {
    const total = parts.bytesOf().reduce((a, b) => a + b, 0)
    if (total > budget) {
      throw new Error(`the result's ${stores} blocks (${total} bytes together) do not fit the storage's maxBytes (${budget} bytes)`)
    }
  }
  // A directory is opened (its journal read, on a worker thread) before the first store
  // into it. Results stored meanwhile, by this agent or others, wait for that opening
  // instead of each taking a worker thread that would only wait for the same journal (a
  // burst of worker wake-ups on a busy machine keeps the event loop waiting too); then
  // they mostly store inline. Only stores through our own native store wait: an
  // overridden `store` may never open the directory.
  const ownStore = nativeFor(storage, 'store')
  const opening = ownStore ? storage[OPENING] : undefined
  if (opening && !opening.pending && ownStore.isOpen === false) opening.pending = openDirectory(ownStore, opening)
  // Inline stores resolve without giving the event loop a turn: let it run now and then
  // (before any block is numbered, so the blocks keep their order).
  if (opening?.pending || mustYield()) return storeBlocksLater(storage, content, keyPrefix, parts, { budget, stores, opening })
  return storeEvery(storage, content, keyPrefix, parts, { budget, stores })
}

/** {@link storeBlocks} once the directory is open and the event loop has had its turn. */
async function storeBlocksLater(storage, content, keyPrefix, parts, { budget, stores, opening }) {
  while (opening?.pending) await opening.pending
  if (mustYield()) await waitForTurn()
  return storeEvery(storage, content, keyPrefix, parts, { budget, stores })
}

/**
 * Stores every block now (each numbered before this returns) and returns the references,
 * or a promise of them when a store runs on a worker thread (see {@link storeBlocks}).
 */
function storeEvery(storage, content, keyPrefix, { texts, nativeTexts, utf8 }, { budget, stores }) {
  const attempts = content.map((block, i) => {
    try {
      return storeBlock(storage, block, `${keyPrefix}_${i}`, { text: texts.get(i), nativeText: nativeTexts.get(i), encoded: utf8.get(i) })
    } catch (err) {
      return Promise.reject(err)
    }
  })
  if (!attempts.some((a) => a instanceof Promise)) return stillHeld(storage, attempts, { budget, stores })
  return Promise.allSettled(attempts).then((outcomes) => {
    const failed = outcomes.find((o) => o.status === 'rejected')
    if (failed) {
      discardStored(storage, outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value))
      throw failed.reason
    }
    return stillHeld(storage, outcomes.map((o) => o.value), { budget, stores })
  })
}

/**
 * `references` when every block is still held; under a byte budget a concurrent store
 * may have evicted one: then the others are removed and the offload fails.
 */
function stillHeld(storage, references, { budget, stores }) {
  if (budget !== undefined && stores > 0) {
    const nativeStore = nativeFor(storage, 'retrieve')
    const refs = references.filter((r) => r.ref).map((r) => r.ref)
    if (typeof nativeStore?.holdsAll === 'function' && !nativeStore.holdsAll(refs)) {
      discardStored(storage, references)
      throw new Error("a block of this result was evicted to make room for a concurrent store before the result's other blocks were stored")
    }
  }
  return references
}

/**
 * Opens the directory of `nativeStore` on a worker thread; the promise, kept in
 * `opening.pending` while it runs, always resolves (a failure to open is left for the
 * stores to report) and clears `opening.pending` when it does.
 */
function openDirectory(nativeStore, opening) {
  const forget = () => {
    if (opening.pending === done) opening.pending = undefined
  }
  const done = nativeStore.open().then(forget, forget)
  return done
}

/**
 * Removes blocks of a result that failed as a whole (best effort, in the background: a
 * failure is logged). Our storages remove them natively; a unified storage deletes their
 * keys; other storages have no way to remove and keep them.
 * @param {object} storage
 * @param {{ ref: string, storageRef?: string }[]} references
 */
export function discardStored(storage, references) {
  const refs = references.map((r) => r?.storageRef ?? r?.ref).filter(Boolean)
  if (refs.length === 0 || !storage) return
  const nativeStore = storage[NATIVE]
  let removal
  try {
    if (typeof nativeStore?.discard === 'function') removal = nativeStore.discard(refs)
    else if (!nativeStore && !isOffloaderStorage(storage)) removal = Promise.all(refs.map((ref) => storage.delete(ref)))
  } catch (err) {
    removal = Promise.reject(err)
  }
  Promise.resolve(removal).catch((err) => logger.warn(`blocks=<${refs.length}> | could not remove the stored blocks of a failed offload`, err))
}
