// Where the offload manifest lives in a storage's key-value side: one key per entry under
// `offload-manifest/<session>/`. Kept apart from ./manifest.js so that tools which only
// find or remove entries (the command-line tool) do not load the SDK.

/** The namespace of manifest entries in the plugin's storage. */
export const MANIFEST_NAMESPACE = 'offload-manifest'

/** A storage key segment for a session id (any string): its UTF-8 in base64url. */
export function sessionSegment(sessionId) {
  return Buffer.from(sessionId, 'utf8').toString('base64url') || '_'
}

/** The key prefix of a session's manifest entries in the root of a storage. */
export function manifestPrefix(sessionId) {
  return `${MANIFEST_NAMESPACE}/${sessionSegment(sessionId)}/`
}
