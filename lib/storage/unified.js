// The SDK's unified `Storage` interface (`write`/`read`/`delete`/`list`/`namespace`) as
// the plugin meets it: namespaced views with the SDK's prefix rules, and storing a block
// into any storage, offloader-style (`store`/`retrieve`) or unified (framed bytes).
import { EPHEMERAL, NAMESPACED, StorageError, frameContent, unframeContent } from '../sdk.js'

/** Whether `storage` has the offloader interface (the SDK plugin's own test). */
export function isOffloaderStorage(storage) {
  return 'store' in storage && 'retrieve' in storage
}

/**
 * Throws a StorageError for a key or prefix with an unpaired surrogate: it has no UTF-8
 * form, and native code would read each one as U+FFFD, so that two different keys would
 * name one value (the second write would replace the first).
 * @param {string} key
 * @param {'key' | 'prefix'} what
 */
export function checkKeyForm(key, what) {
  if (typeof key === 'string' && !key.isWellFormed()) {
    throw new StorageError(`Invalid storage ${what} '${key}': it has an unpaired surrogate (no UTF-8 form)`)
  }
}

/** The SDK's namespacing of unified storages (prefix normalisation included). */
export function normalizePrefix(prefix) {
  if (prefix.includes('\\')) throw new StorageError(`Invalid storage prefix '${prefix}': backslashes are not allowed`)
  checkKeyForm(prefix, 'prefix')
  const parts = prefix.split('/')
  const segments = parts.filter(Boolean)
  if (segments.includes('..')) throw new StorageError(`Invalid storage prefix '${prefix}': '..' path segments are not allowed`)
  const joined = segments.join('/')
  return parts[parts.length - 1] === '' && joined ? joined + '/' : joined
}

/** A view of a unified storage with every key under `prefix` (composable, marked as namespaced). */
export function namespaceView(storage, prefix) {
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

/** `storage` itself when already namespaced, else its view under `prefix` (as the SDK resolves it). */
export function resolveNamespace(storage, prefix) {
  if (NAMESPACED in storage) return storage
  if (storage.namespace) return storage.namespace(prefix)
  return namespaceView(storage, prefix)
}

/** Stores one block: `store()` on an offloader storage, framed bytes under `key` on a unified one. */
export async function storeContent(storage, key, content, contentType) {
  if (isOffloaderStorage(storage)) return storage.store(key, content, contentType)
  const ct = contentType ?? 'application/octet-stream'
  await storage.write(key, frameContent(content, ct))
  return key
}

/** Reads one block back by reference; rejects with `Reference not found: <ref>` when missing. */
export async function retrieveContent(storage, reference) {
  if (isOffloaderStorage(storage)) return storage.retrieve(reference)
  const data = await storage.read(reference)
  if (data === null) throw new Error(`Reference not found: ${reference}`)
  return unframeContent(data)
}
