// Where the offload manifest lives in a storage's key-value side: one key per entry under
// `offload-manifest/<session>/`. Kept apart from ./manifest.js so that tools which only
// find or remove entries (the command-line tool) do not load the SDK.
import { createHash } from 'node:crypto'

/** The namespace of manifest entries in the plugin's storage. */
export const MANIFEST_NAMESPACE = 'offload-manifest'

/**
 * Longest session segment spelled out (base64url of the id's UTF-8, 96 bytes of id);
 * longer ids are hashed, so every key fits every file system's 143- to 255-byte names
 * and S3's 1,024-byte keys whatever the id's length.
 */
const MAX_SPELLED_SEGMENT = 128

/**
 * Refuses a session id that is not a non-empty, well-formed string. An unpaired
 * surrogate has no UTF-8 form: two ids that differ only there would become one session
 * in native code and in storage keys, so they are refused rather than merged.
 * @param {unknown} sessionId
 * @param {string} what - names the argument in the error
 */
export function checkSessionId(sessionId, what) {
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw new TypeError(`${what} must be a non-empty string`)
  }
  if (!sessionId.isWellFormed()) {
    throw new TypeError(`${what} must be a well-formed string (it has an unpaired surrogate)`)
  }
  return sessionId
}

/**
 * A storage key segment for a session id: its UTF-8 in base64url when that is at most
 * 128 characters, else `~` and the base64url of its SHA-256 (`~` is not in the base64url
 * alphabet, so the two forms never meet).
 * @param {string} sessionId - well-formed (see {@link checkSessionId})
 */
export function sessionSegment(sessionId) {
  const utf8 = Buffer.from(checkSessionId(sessionId, 'session id'), 'utf8')
  const spelled = utf8.toString('base64url')
  if (spelled.length <= MAX_SPELLED_SEGMENT) return spelled
  return `~${createHash('sha256').update(utf8).digest('base64url')}`
}

/**
 * The segment earlier releases spelled out for a session id now hashed (its base64url,
 * up to the 255 bytes of a file name), or `undefined`: entries found there are moved to
 * the session's segment, and removed with the session.
 * @param {string} sessionId - well-formed
 */
export function legacySegment(sessionId) {
  const spelled = Buffer.from(sessionId, 'utf8').toString('base64url')
  return spelled.length > MAX_SPELLED_SEGMENT && spelled.length <= 255 ? spelled : undefined
}

/** The key prefix of a session's manifest entries in the root of a storage. */
export function manifestPrefix(sessionId) {
  return `${MANIFEST_NAMESPACE}/${sessionSegment(sessionId)}/`
}

/** The key prefix where an earlier release kept a session's entries, if another (see {@link legacySegment}). */
export function legacyManifestPrefix(sessionId) {
  const legacy = legacySegment(checkSessionId(sessionId, 'session id'))
  return legacy === undefined ? undefined : `${MANIFEST_NAMESPACE}/${legacy}/`
}

/**
 * The key of one manifest entry, relative to its session's prefix: `<id>.json` for an
 * opaque id (looked up by id), else a digest of the id (a storage reference, which may
 * be a long path: it must not become a long or nested key).
 * @param {string} id
 */
export function entryKey(id) {
  if (/^ref_[A-Za-z0-9_-]{16}$/.test(id)) return `${id}.json`
  // A reference with an unpaired surrogate (a unified storage may issue one) has no UTF-8
  // form: its UTF-16 code units are digested instead, under another prefix.
  if (!id.isWellFormed()) return `u_${createHash('sha256').update(id, 'utf16le').digest('base64url')}.json`
  return `p_${createHash('sha256').update(id, 'utf8').digest('base64url')}.json`
}

/** The shape of an opaque id (`ref_` and 16 URL-safe characters). */
export const OPAQUE_ID = /^ref_[A-Za-z0-9_-]{16}$/

/**
 * The key, relative to a session's prefix, of one entry kept as the session's sample:
 * the shape of a decoy lookup, read with one small read after a restart (never the
 * whole manifest). Entries' keys end in `.json`, so listings of entries skip it.
 */
export const SAMPLE_KEY = 'sample'

/** The manifest entry a stored value holds (its JSON in UTF-8), if it is one. */
export function parseEntry(data) {
  try {
    const entry = data ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined
    return entry && typeof entry.id === 'string' && typeof entry.reference === 'string' ? entry : undefined
  } catch {
    return undefined
  }
}
