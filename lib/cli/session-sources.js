// The session snapshot storages `sessions` reads: a directory of the SDK's
// FileStorage / our FileSnapshotStorage, or `s3://bucket/prefix` of the SDK's session
// S3Storage / our S3SnapshotStorage. Both hold
// `<session>/scopes/<scope>/<scopeId>/snapshots/{snapshot_latest.json, manifest.json,
// immutable_history/snapshot_<id>.json}`; this module finds those keys and reads them.
// A SessionManager without a storage of its own keeps its snapshots in the agent's
// unified storage under `session/` (one FileStorage or S3Storage as the agent's
// `storage`, as the README recommends): those are found too, under `<store>/session/`.
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { native } from '../native.js'
import { checkDirectory, parseS3Url, s3Options } from './stores.js'

/** Where a SessionManager keeps snapshots in an agent's unified storage (the SDK's namespace). */
export const SESSION_NAMESPACE = 'session/'

/**
 * The key of one snapshot file, split into its parts (the base: `''` or `session/`,
 * session, scope, scope id, file); `null` for other keys.
 */
const SNAPSHOT_KEY = /^((?:session\/)?)([^/]+)\/scopes\/(agent|multiAgent)\/([^/]+)\/snapshots\/(snapshot_latest\.json|manifest\.json|immutable_history\/snapshot_[^/]+\.json)$/

/**
 * The session storage named by `spec`: `{ keys(session?), read(key), deleteSession(id, base) }`;
 * `keys(session)` lists the session's keys under both bases (`''` and `session/`).
 * @param {string} spec
 * @param {Record<string, unknown>} values - the parsed options
 */
export function openSessionSource(spec, values) {
  const s3 = parseS3Url(spec)
  if (s3) {
    const options = s3Options(values, s3.prefix)
    const prefix = s3.prefix.replace(/\/+$/, '')
    const kv = new native.NativeS3Store(s3.bucket, { ...options, prefix: prefix ? `${prefix}/` : '' })
    const snapshotsAt = (base) => new native.NativeS3SnapshotStore(s3.bucket, { ...options, prefix: [prefix, base.replace(/\/$/, '')].filter(Boolean).join('/') })
    return {
      keys: async (session) =>
        session === undefined ? kv.kvList('') : (await Promise.all(['', SESSION_NAMESPACE].map((base) => kv.kvList(`${base}${session}/`)))).flat(),
      read: async (key) => {
        const value = await kv.kvRead(key)
        return value === null ? null : value.toString('utf8')
      },
      deleteSession: (id, base = '') => snapshotsAt(base).deleteSession(id),
    }
  }
  checkDirectory(spec)
  /** The files under `<spec>/<under>` (every file for `''`), as keys relative to `spec`. */
  const filesUnder = async (under) => {
    const root = under === '' ? spec : join(spec, ...under.split('/').filter(Boolean))
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch((err) => {
      if (err?.code === 'ENOENT' || err?.code === 'ENOTDIR') return []
      throw err
    })
    return entries
      .filter((e) => e.isFile())
      .map((e) => under + join(e.parentPath ?? e.path, e.name).slice(root.length + 1).split(/[\\/]/).join('/'))
  }
  return {
    keys: async (session) =>
      session === undefined ? filesUnder('') : (await Promise.all(['', SESSION_NAMESPACE].map((base) => filesUnder(`${base}${session}/`)))).flat(),
    read: async (key) => readFile(join(spec, ...key.split('/')), 'utf8').catch(() => null),
    deleteSession: (id, base = '') => new native.NativeSnapshotDir(base ? join(spec, base) : spec, false).deleteSession(id),
  }
}

/**
 * The sessions of `keys`, each with its scopes: `Map<session, Map<'scope/id', { scope,
 * scopeId, snapshots, latestKey, base }>>` (snapshots: snapshot files, the latest
 * included; base: `''`, or `session/` for the snapshots of an agent's unified storage).
 * @param {string[]} keys
 */
export function sessionsOf(keys) {
  const sessions = new Map()
  for (const key of keys) {
    const m = SNAPSHOT_KEY.exec(key)
    if (!m) continue
    const [, base, session, scope, scopeId, file] = m
    if (!sessions.has(session)) sessions.set(session, new Map())
    const scopes = sessions.get(session)
    const id = `${base}${scope}/${scopeId}`
    if (!scopes.has(id)) scopes.set(id, { scope, scopeId, snapshots: 0, latestKey: null, base })
    const entry = scopes.get(id)
    if (file !== 'manifest.json') entry.snapshots++
    if (file === 'snapshot_latest.json') entry.latestKey = key
  }
  return sessions
}

/** The `createdAt` of the snapshot stored under `key` (ms), or `null`. */
export async function createdAt(source, key) {
  if (!key) return null
  try {
    const ms = Date.parse(JSON.parse(await source.read(key))?.createdAt)
    return Number.isFinite(ms) ? ms : null
  } catch {
    return null
  }
}
