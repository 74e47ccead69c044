// Listing and removing artifacts through the native store, with a progress bar on a
// terminal for long removals.
import { sweepManifestQuietly } from '../manifest-sweep.js'
import { progress } from './terminal.js'

/** Names removed per native call (one journal append, or one DeleteObjects request). */
const REMOVE_BATCH = 1000

/**
 * Every artifact the store knows (expired ones included), oldest first.
 * @param {{ store: any }} opened
 * @returns {Promise<Array<{ name: string, reference: string, contentType: string, bytes: number, session?: string, createdMs?: number, expiresMs?: number }>>}
 */
export async function listArtifacts(opened) {
  return opened.store.listArtifacts()
}

/**
 * Removes `artifacts` in batches; with `onlyExpiredAt`, only those still expired at that
 * time when each batch runs (a TTL is re-checked, never assumed). Resolves with how many
 * this process removed.
 * @param {{ store: any }} opened
 * @param {Array<{ name: string }>} artifacts
 * @param {number | null} onlyExpiredAt
 */
export async function removeArtifacts(opened, artifacts, onlyExpiredAt) {
  const bar = await progress('removing', artifacts.length)
  let removed = 0
  try {
    for (let i = 0; i < artifacts.length; i += REMOVE_BATCH) {
      const batch = artifacts.slice(i, i + REMOVE_BATCH).map((a) => a.name)
      removed += await opened.store.removeArtifacts(batch, onlyExpiredAt)
      bar.increment(batch.length)
    }
  } finally {
    bar.stop()
  }
  // The offload manifest's entries of what went go too (and sessions left empty).
  if (removed > 0) await sweepManifestQuietly(opened.store)
  return removed
}
