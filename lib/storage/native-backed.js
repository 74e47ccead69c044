// The base of our three storages: one native store behind both of the SDK's storage
// interfaces, the offloader's (`store`/`retrieve`) and the unified one (`write`/`read`/
// `delete`/`list`/`namespace`, keys normalised natively as the SDK's `normalizeKey`).
import { syncClock } from '../lifecycle.js'
import { checkSessionId, legacyManifestPrefix, manifestPrefix } from '../manifest-keys.js'
import { StorageError, logger } from '../sdk.js'
import { asUint8Array, mustYield, toBytes, waitForTurn } from '../native.js'
import { checkKeyForm, namespaceView } from './unified.js'
import { sweepManifestQuietly } from '../manifest-sweep.js'

/** Internal handle of our storages: the native store behind them. */
export const NATIVE = Symbol('context-offloader.native')
/** Internal: the background sweep of a storage (see ../lifecycle.js). */
export const SWEEP = Symbol('context-offloader.sweep')
/**
 * Internal: the opening of a file storage's directory while it runs (`{ pending }`),
 * shared by the storage and its views (see `storeBlocks`).
 */
export const OPENING = Symbol('context-offloader.opening')
/** Internal: whether references are spelled as the SDK's plugin spells them (`<dir>/<file>`). */
export const PLUGIN_VIEW = Symbol('context-offloader.pluginView')
/**
 * Internal: the texts an in-memory storage has numbered but not copied yet (see
 * ./pending-texts.js); an own property of the storages that keep them.
 */
export const PENDING = Symbol('context-offloader.pending')

/**
 * The native store behind `storage` when its `method` (`'store'` or `'retrieve'`) is
 * ours; `undefined` when it is not one of our storages or when a subclass or the
 * instance overrides that method (for metrics, logging, encryption, ...): then the
 * caller goes through the method, as the SDK does.
 */
export function nativeFor(storage, method) {
  const nativeStore = storage?.[NATIVE]
  return nativeStore && storage[method] === NativeBackedStorage.prototype[method] ? nativeStore : undefined
}

/** Tagged handles of each storage, by lifetime and session (see {@link tagged}). */
const TAGGED = new WeakMap()
/** Most tagged handles kept per storage (sessions come and go). */
const MAX_TAGGED = 256

/**
 * `storage` as seen by stores that carry `sessionId` and last `ttl` milliseconds (`null`:
 * the storage's default): for our storages, a view over the same instance (same store,
 * same numbering, same overrides) whose native handle tags what it stores; any other
 * storage is returned as it is (the offloader interface has no place for tags).
 * @param {object} storage
 * @param {string | null | undefined} sessionId
 * @param {number | null | undefined} ttl
 */
export function tagged(storage, sessionId, ttl) {
  if (sessionId == null && ttl == null) return storage
  const nativeStore = storage?.[NATIVE]
  if (typeof nativeStore?.withTags !== 'function') return storage
  if (sessionId != null) checkSessionId(sessionId, 'sessionId')
  let views = TAGGED.get(storage)
  if (!views) TAGGED.set(storage, (views = new Map()))
  const key = `${ttl ?? ''}\u0000${sessionId ?? ''}`
  let view = views.get(key)
  if (!view) {
    if (views.size >= MAX_TAGGED) views.clear()
    view = Object.create(storage)
    const handle = nativeStore.withTags(sessionId ?? null, ttl ?? null)
    // Reading the storage's own handle first copies what it has not copied yet (see
    // ./pending-texts.js): the view's handle reaches the same store.
    Object.defineProperty(view, NATIVE, {
      get: () => {
        void storage[NATIVE]
        return handle
      },
    })
    views.set(key, view)
  }
  return view
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
export async function kvCall(run) {
  try {
    return await run()
  } catch (err) {
    throw toStorageError(err)
  }
}

/**
 * Shared implementation of the native-backed storages: the offloader interface
 * (`store`/`retrieve`) and the SDK's unified `Storage` (`write`/`read`/`delete`/
 * `list`/`namespace`), with keys normalised natively as the SDK's `normalizeKey`.
 */
export class NativeBackedStorage {
  /**
   * @param {object | null} nativeStore - the native store; `null` when a subclass
   *   defines `[NATIVE]` itself
   * @param {boolean} concatenated
   */
  constructor(nativeStore, concatenated) {
    if (nativeStore !== null) Object.defineProperty(this, NATIVE, { value: nativeStore })
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
    syncClock(this, nativeStore)
    const args = [String(key), toBytes(content), String(contentType), this[PLUGIN_VIEW]]
    if (mustYield()) await waitForTurn()
    const outcome = nativeStore.storeBytesNow(...args) ?? (await nativeStore.storeBytes(...args))
    return outcome.reference
  }

  /**
   * Retrieves a block by reference; rejects with `Reference not found: <ref>` when unknown.
   * @param {string} reference
   */
  async retrieve(reference) {
    // Native code would read an unpaired surrogate as U+FFFD: another spelling of a
    // reference that was issued, never one itself.
    if (!String(reference).isWellFormed()) throw new Error(`Reference not found: ${reference}`)
    syncClock(this, this[NATIVE])
    const outcome = await this[NATIVE].retrieve(String(reference))
    return { content: asUint8Array(outcome.content), contentType: outcome.contentType }
  }

  /**
   * Removes every artifact whose TTL ran out; resolves with how many. (Expired
   * references are already refused before any sweep.)
   * @returns {Promise<number>}
   */
  async cleanupExpired() {
    syncClock(this, this[NATIVE])
    const removed = await this[NATIVE].cleanupExpired()
    // The offload manifest's entries of what expired go too (and of anything else gone).
    if (removed > 0) await sweepManifestQuietly(this[NATIVE])
    return removed
  }

  /**
   * Removes every artifact stored for `sessionId`; resolves with how many.
   * @param {string} sessionId
   * @returns {Promise<number>}
   */
  async deleteSession(sessionId) {
    checkSessionId(sessionId, 'deleteSession() session id')
    const removed = await this[NATIVE].deleteSession(sessionId)
    // The plugin's offload manifest of the session (opaque ids, `list`) goes with it, and
    // so does its directory, whose name would tell the session's id; the artifacts are
    // gone already, so a failure here is logged, not thrown.
    try {
      for (const prefix of [manifestPrefix(sessionId), legacyManifestPrefix(sessionId)]) {
        if (prefix === undefined) continue
        const keys = await kvCall(() => this[NATIVE].kvList(prefix))
        for (const key of keys) await kvCall(() => this[NATIVE].kvDelete(key))
        if (keys.length > 0 && typeof this[NATIVE].kvPrune === 'function') await kvCall(() => this[NATIVE].kvPrune(prefix))
      }
    } catch (err) {
      logger.warn(`session=<${sessionId}> | artifacts deleted, but not the offload manifest`, err)
    }
    return removed
  }

  /**
   * What the storage holds: live artifacts and their bytes, bytes actually held
   * (`storedBytes`: identical content counted once when deduplicated), per session.
   * @returns {Promise<{ artifacts: number, bytes: number, storedBytes: number, sessions: Record<string, { artifacts: number, bytes: number }> }>}
   */
  async stats() {
    syncClock(this, this[NATIVE])
    const stats = await this[NATIVE].stats()
    return { artifacts: stats.artifacts, bytes: stats.bytes, storedBytes: stats.storedBytes, sessions: { ...stats.sessions } }
  }

  /** Stops the background sweep (`cleanupIntervalSeconds`), if any. Stored content stays. */
  close() {
    this[SWEEP]?.stop()
  }

  /**
   * Unified storage: stores `data` under `key`, replacing any value (bytes are copied).
   * @param {string} key
   * @param {Uint8Array} data
   */
  async write(key, data) {
    checkKeyForm(key, 'key')
    const nativeStore = this[NATIVE]
    const bytes = toBytes(data)
    if (mustYield()) await waitForTurn()
    await kvCall(async () => {
      if (!nativeStore.kvWriteNow(key, bytes)) await nativeStore.kvWrite(key, bytes)
    })
  }

  /**
   * Unified storage: the bytes under `key` (a copy), or `null`.
   * @param {string} key
   */
  async read(key) {
    checkKeyForm(key, 'key')
    const value = await kvCall(() => this[NATIVE].kvRead(key))
    return value === null ? null : asUint8Array(value)
  }

  /**
   * Unified storage: removes `key` (no-op when missing).
   * @param {string} key
   */
  async delete(key) {
    checkKeyForm(key, 'key')
    await kvCall(() => this[NATIVE].kvDelete(key))
  }

  /**
   * Unified storage: the full keys starting with `prefix`, sorted.
   * @param {string} prefix
   */
  async list(prefix) {
    checkKeyForm(prefix, 'prefix')
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
