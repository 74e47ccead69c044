// Reading one artifact back, with the store's "not found" as a user error.
import { UsageError } from './errors.js'

/** Whether a native failure says the reference names nothing (unknown, expired, evicted). */
function isNotFound(err) {
  return String(err?.message ?? err).startsWith('Reference not found')
}

/**
 * The user error for a native failure that says `reference` names nothing: gone (with the
 * reason: expired, evicted) or unknown; `null` for any other failure.
 * @param {unknown} err
 * @param {string} reference
 */
export function missingReference(err, reference) {
  const gone = /^Reference not found \(([^)]*)\)/.exec(String(err?.message))
  if (gone) return new UsageError(`${reference}: gone (${gone[1]})`)
  if (isNotFound(err)) return new UsageError(`unknown reference: ${reference}`)
  return null
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
    throw missingReference(err, reference) ?? err
  }
}
