// The opaque ids (`ref_…`) the plugin hands out with `references: 'opaque'`, as the
// command-line tool meets them: an id of a session resolved to the artifact behind it
// (`show`, `grep`), and the id of each listed artifact (`ls`). Read from the offload
// manifest the plugin keeps in the store's key-value side (`offload-manifest/<session>/`).
import { join } from 'node:path'
import { OPAQUE_ID, entryKey, legacyManifestPrefix, manifestPrefix, parseEntry } from '../manifest-keys.js'
import { UsageError } from './errors.js'

/** Manifest entries read at once. */
const READ_CONCURRENCY = 16

/** The artifact name at the end of a storage reference (a path or an `s3://` URI). */
function artifactName(reference) {
  return String(reference).split(/[\\/]/).pop()
}

/** The key prefixes of a session's manifest entries (the current one, and an earlier release's). */
function prefixesOf(session) {
  return [manifestPrefix(session), legacyManifestPrefix(session)].filter(Boolean)
}

/** This store's reference of an artifact named `name` (as `ls` shows it). */
function referenceIn(opened, name) {
  return opened.kind === 'file' ? join(opened.label, name) : `s3://${opened.store.bucket}/${opened.store.prefix}${name}`
}

/**
 * The reference to read for what the user named: a storage reference as it is, or an
 * opaque id resolved in `session` to this store's reference of its artifact.
 * @param {{ kind: string, label: string, store: any }} opened
 * @param {string} reference - a storage reference or an opaque id
 * @param {string | undefined} session - `--session`
 */
export async function resolveReference(opened, reference, session) {
  if (!OPAQUE_ID.test(reference)) return reference
  if (session === undefined) throw new UsageError(`${reference} is an opaque id: pass --session ID, the session it was given in`)
  if (session === '') throw new UsageError('--session: expected a session id')
  for (const prefix of prefixesOf(session)) {
    const entry = parseEntry(await opened.store.kvRead(`${prefix}${entryKey(reference)}`))
    if (entry?.id === reference) return referenceIn(opened, artifactName(entry.reference))
  }
  throw new UsageError(`unknown id ${reference} in session ${session}`)
}

/**
 * The opaque ids of the artifacts of `sessions`: `Map<artifact name, id>`, read from
 * their manifests (one listing per session, one read per opaque entry).
 * @param {{ store: any }} opened
 * @param {Iterable<string>} sessions
 */
export async function opaqueIds(opened, sessions) {
  const ids = new Map()
  for (const session of sessions) {
    let keys = []
    try {
      keys = (await Promise.all(prefixesOf(session).map((prefix) => opened.store.kvList(prefix)))).flat()
    } catch {
      continue
    }
    const entries = keys.filter((key) => /\/ref_[A-Za-z0-9_-]{16}\.json$/.test(key))
    for (let i = 0; i < entries.length; i += READ_CONCURRENCY) {
      const read = await Promise.all(entries.slice(i, i + READ_CONCURRENCY).map((key) => opened.store.kvRead(key).catch(() => null)))
      for (const data of read) {
        const entry = parseEntry(data)
        if (entry && OPAQUE_ID.test(entry.id)) ids.set(artifactName(entry.reference), entry.id)
      }
    }
  }
  return ids
}
