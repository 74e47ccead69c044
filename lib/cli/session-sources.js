// The session snapshot storages `sessions` reads: a directory of the SDK's
// FileStorage / our FileSnapshotStorage, or `s3://bucket/prefix` of the SDK's session
// S3Storage / our S3SnapshotStorage. Both hold
// `<session>/scopes/<scope>/<scopeId>/snapshots/{snapshot_latest.json, manifest.json,
// immutable_history/snapshot_<id>.json}`; this module finds those keys and reads them.
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { native } from '../native.js'
import { checkDirectory, parseS3Url, s3Options } from './stores.js'

/** The key of one snapshot file, split into its parts; `null` for other keys. */
const SNAPSHOT_KEY = /^([^/]+)\/scopes\/(agent|multiAgent)\/([^/]+)\/snapshots\/(snapshot_latest\.json|manifest\.json|immutable_history\/snapshot_[^/]+\.json)$/

/**
 * The session storage named by `spec`: `{ keys(session?), read(key), deleteSession(id) }`.
 * @param {string} spec
 * @param {Record<string, unknown>} values - the parsed options
 */
export function openSessionSource(spec, values) {
  const s3 = parseS3Url(spec)
  if (s3) {
    const options = s3Options(values, s3.prefix)
    const kv = new native.NativeS3Store(s3.bucket, { ...options, prefix: s3.prefix ? `${s3.prefix.replace(/\/+$/, '')}/` : '' })
    const snapshots = new native.NativeS3SnapshotStore(s3.bucket, { ...options, prefix: s3.prefix.replace(/\/+$/, '') })
    return {
      keys: async (session) => kv.kvList(session === undefined ? '' : `${session}/`),
      read: async (key) => {
        const value = await kv.kvRead(key)
        return value === null ? null : value.toString('utf8')
      },
      deleteSession: (id) => snapshots.deleteSession(id),
    }
  }
  checkDirectory(spec)
  const snapshots = new native.NativeSnapshotDir(spec, false)
  return {
    keys: async (session) => {
      const root = session === undefined ? spec : join(spec, session)
      const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch((err) => {
        if (err?.code === 'ENOENT') return []
        throw err
      })
      const base = session === undefined ? '' : `${session}/`
      return entries
        .filter((e) => e.isFile())
        .map((e) => base + join(e.parentPath ?? e.path, e.name).slice(root.length + 1).split(/[\\/]/).join('/'))
    },
    read: async (key) => readFile(join(spec, ...key.split('/')), 'utf8').catch(() => null),
    deleteSession: (id) => snapshots.deleteSession(id),
  }
}

/**
 * The sessions of `keys`, each with its scopes: `Map<session, Map<'scope/id', { scope,
 * scopeId, snapshots, latestKey }>>` (snapshots: snapshot files, the latest included).
 * @param {string[]} keys
 */
export function sessionsOf(keys) {
  const sessions = new Map()
  for (const key of keys) {
    const m = SNAPSHOT_KEY.exec(key)
    if (!m) continue
    const [, session, scope, scopeId, file] = m
    if (!sessions.has(session)) sessions.set(session, new Map())
    const scopes = sessions.get(session)
    const id = `${scope}/${scopeId}`
    if (!scopes.has(id)) scopes.set(id, { scope, scopeId, snapshots: 0, latestKey: null })
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
