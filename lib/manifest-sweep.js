// Keeps the offload manifest true to the store it lives in: the entries of artifacts the
// store no longer holds (expired by any TTL, evicted under a budget or by cycles, removed
// by a sweep or by `gc`) are removed, and a session left with no entry loses its sample
// and its directory. Runs on our native storages, whose key-value side holds the
// manifest under `offload-manifest/<session>/` next to the artifacts.
import { MANIFEST_NAMESPACE, SAMPLE_KEY, parseEntry } from './manifest-keys.js'
import { mustYield, waitForTurn } from './native.js'
import { logger } from './sdk.js'

/** Manifest entries read at once. */
const READ_CONCURRENCY = 16
/** References checked per native call (a file store stats each one). */
const CHECK_BATCH = 256

/**
 * For each of `references`: `true` when `nativeStore` holds it now, `false` when it is
 * gone, `null` when that cannot be told (the entry is then kept).
 * @returns {Promise<Array<boolean | null>>}
 */
export async function holdStates(nativeStore, references) {
  const states = []
  for (let i = 0; i < references.length; i += CHECK_BATCH) {
    if (mustYield()) await waitForTurn()
    states.push(...nativeStore.holdsEach(references.slice(i, i + CHECK_BATCH)))
  }
  return states
}

/** The name prefix of a record of an offload made with `reuse` (see ../lib/offloader.js), in its session's folder. */
export const REUSE_RECORD = 'again-'

/**
 * Of the reuse records under `keys`, those whose offload no longer holds every block it
 * stored (unreadable records are kept).
 */
async function staleReuseRecords(nativeStore, keys) {
  const stale = []
  for (const key of keys) {
    let references
    try {
      const record = JSON.parse(Buffer.from(await nativeStore.kvRead(key)).toString('utf8'))
      references = record.references.map((r) => r.storageReference ?? r.reference)
      if (!references.every((r) => typeof r === 'string')) continue
    } catch {
      continue
    }
    const states = await holdStates(nativeStore, references)
    if (states.some((held) => held === false)) stale.push(key)
  }
  return stale
}

/**
 * Removes the manifest entries of `nativeStore` whose artifacts it no longer holds, in
 * every session (or only under `prefix`, a session's `offload-manifest/<segment>/`);
 * a session left with no entry loses its sample and, on a directory, its folder.
 * Resolves with the number of entries removed. Entries that cannot be read or checked
 * are kept.
 * @param {object} nativeStore - a native store with `kvList`/`kvRead`/`kvDelete`/`holdsEach`
 * @param {string} [prefix]
 */
export async function sweepManifest(nativeStore, prefix = `${MANIFEST_NAMESPACE}/`) {
  if (typeof nativeStore?.holdsEach !== 'function') return 0
  const bySession = new Map()
  for (const key of await nativeStore.kvList(prefix)) {
    const cut = key.indexOf('/', MANIFEST_NAMESPACE.length + 1)
    if (cut < 0) continue
    const session = key.slice(0, cut + 1)
    if (!bySession.has(session)) bySession.set(session, [])
    bySession.get(session).push(key)
  }
  let removed = 0
  for (const [session, keys] of bySession) {
    const entryKeys = keys.filter((key) => key.endsWith('.json'))
    const references = []
    for (let i = 0; i < entryKeys.length; i += READ_CONCURRENCY) {
      const read = await Promise.all(entryKeys.slice(i, i + READ_CONCURRENCY).map((key) => nativeStore.kvRead(key)))
      references.push(...read.map((data) => parseEntry(data)?.reference))
    }
    const checked = references.map((r, i) => [r, entryKeys[i]]).filter(([r]) => r !== undefined)
    const states = await holdStates(nativeStore, checked.map(([r]) => r))
    const gone = checked.filter((_, i) => states[i] === false).map(([, key]) => key)
    for (const key of gone) await nativeStore.kvDelete(key)
    removed += gone.length
    // The core's records of offloads made with `reuse` go when anything they stored is gone.
    const staleReuse = await staleReuseRecords(nativeStore, keys.filter((key) => key.startsWith(`${session}${REUSE_RECORD}`)))
    for (const key of staleReuse) await nativeStore.kvDelete(key)
    const sampleOnly = entryKeys.length === 0 && keys.includes(`${session}${SAMPLE_KEY}`)
    const entriesGone = (gone.length > 0 && gone.length === entryKeys.length) || sampleOnly
    // Nothing of the session's manifest is left: its sample goes too (a new offload in
    // the session writes it again), and its folder once it is empty.
    if (entriesGone) await nativeStore.kvDelete(`${session}${SAMPLE_KEY}`)
    if ((entriesGone || staleReuse.length > 0) && typeof nativeStore.kvPrune === 'function') await nativeStore.kvPrune(session)
  }
  return removed
}

/**
 * {@link sweepManifest}, logging instead of throwing (the removals that called for it
 * are done; a manifest that cannot be swept now is swept next time).
 */
export async function sweepManifestQuietly(nativeStore, prefix) {
  try {
    return await sweepManifest(nativeStore, prefix)
  } catch (err) {
    logger.warn('the offload manifest could not be brought up to date with the store', err)
    return 0
  }
}

/** Native stores with a sweep of their manifest scheduled (see {@link sweepManifestSoon}). */
const scheduled = new WeakSet()
/** How long after a store under a byte budget its manifest is swept, in ms. */
export const BUDGET_SWEEP_DELAY_MS = 1000

/**
 * Sweeps the manifest of `nativeStore` a moment from now (once, however many calls come
 * meanwhile): after stores under a byte budget, whose evictions happen inside the store.
 * The timer does not keep the process alive.
 */
export function sweepManifestSoon(nativeStore) {
  if (typeof nativeStore?.holdsEach !== 'function' || scheduled.has(nativeStore)) return
  scheduled.add(nativeStore)
  const timer = setTimeout(() => {
    scheduled.delete(nativeStore)
    sweepManifestQuietly(nativeStore)
  }, BUDGET_SWEEP_DELAY_MS)
  timer.unref?.()
}
