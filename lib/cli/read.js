// Reading one artifact back, with the store's "not found" as a user error.
import { UsageError } from './errors.js'

/** Whether a native failure says the reference names nothing (unknown, expired, evicted). */
export function isNotFound(err) {
  return String(err?.message ?? err).startsWith('Reference not found')
}

/**
 * The content and content type of `reference` in the opened store.
 * @param {{ store: any }} opened
 * @param {string} reference
 */
export async function readArtifact(opened, reference) {
  try {
    return await opened.store.retrieve(reference)
  } catch (err) {
    const gone = /^Reference not found \(([^)]*)\)/.exec(String(err?.message))
    if (gone) throw new UsageError(`${reference}: gone (${gone[1]})`)
    if (isNotFound(err)) throw new UsageError(`unknown reference: ${reference}`)
    throw err
  }
}
