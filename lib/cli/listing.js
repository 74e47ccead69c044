// Listing and removing artifacts through the native store, with progress on a terminal
// for long listings (an S3 prefix: pages listed, then metadata read) and removals.
import { sweepManifestQuietly } from '../manifest-sweep.js'
import { progress } from './terminal.js'

/** How often the progress of a listing is read, in ms. */
const LISTING_POLL_MS = 100

/** Names removed per native call (one journal append, or one DeleteObjects request). */
const REMOVE_BATCH = 1000

/**
 * Every artifact the store knows (expired ones included), oldest first.
 * On a terminal (stderr), the progress of a listing of S3 is drawn while it runs.
 * @param {{ store: any, label: string }} opened
 * @param {{ stream?: NodeJS.WriteStream }} [where]
 * @returns {Promise<Array<{ name: string, reference: string, contentType: string, bytes: number, session?: string, createdMs?: number, expiresMs?: number }>>}
 */
export async function listArtifacts(opened, { stream = process.stderr } = {}) {
  const listing = opened.store.listArtifacts()
  if (!stream.isTTY || typeof opened.store.listingProgress !== 'function') return listing
  return withListingProgress(opened, listing, stream)
}

/**
 * Draws the progress of an S3 listing while `listing` runs: the `ListObjectsV2` pages
 * and artifact objects listed so far, then (once the listing is complete and metadata
 * is being read, one `HeadObject` per artifact) a bar of the objects described. The
 * store's counters count every listing it ran; this one's are what they gained since.
 */
async function withListingProgress(opened, listing, stream) {
  const start = opened.store.listingProgress()
  let pages = null
  let described = null
  let polling = Promise.resolve()
  const poll = async () => {
    const now = opened.store.listingProgress()
    const listed = now.objects - start.objects
    const read = now.described - start.described
    if (read === 0) {
      pages ??= await progress(`listing ${opened.label}`, Infinity, { stream, unit: 'objects' })
      pages.update(listed, { pages: now.pages - start.pages })
    } else {
      if (pages) {
        pages.stop()
        pages = null
      }
      described ??= await progress('reading metadata', listed, { stream })
      described.update(read)
    }
  }
  // Drawn at once (a listing of a few pages may end before the first tick), then on every tick.
  polling = poll().catch(() => {})
  const timer = setInterval(() => {
    polling = polling.then(poll, () => {})
  }, LISTING_POLL_MS)
  try {
    return await listing
  } finally {
    clearInterval(timer)
    await polling
    pages?.stop()
    described?.stop()
  }
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
