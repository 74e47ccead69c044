// S3SnapshotStorage: session snapshots as S3 objects for the SDK's SessionManager, in
// the layout of the SDK's session `S3Storage`. JSON is encoded and parsed here; requests
// run natively with the timeouts, retries and in-flight cap of S3Storage.
import { native } from '../native.js'
import { checkPathForm, describe } from '../numbers.js'
import { SessionError } from '../sdk.js'
import { S3_CONNECTION_OPTION_NAMES, S3_OPTION_NOTES, s3ConnectionOptions } from '../storage/s3.js'
import { warnUnknownOptions } from '../option-names.js'
import { defaultManifest, snapshotPage } from './validation.js'

/**
 * Runs a native snapshot request; failures (`<message>\0<cause>`) become the SDK's
 * `SessionError`, rejected identifiers stay plain errors with the SDK's message.
 */
async function snapshotCall(run) {
  try {
    return await run()
  } catch (err) {
    const text = String(err?.message ?? err)
    const split = text.lastIndexOf('\u0000')
    if (split < 0) throw err
    const cause = text.slice(split + 1)
    throw new SessionError(text.slice(0, split), cause ? { cause: new Error(cause) } : undefined)
  }
}

/** The native form of an SDK `SnapshotLocation` (read here, so a missing one fails as in the SDK). */
function scopeOf(location) {
  return { sessionId: location.sessionId, scope: location.scope, scopeId: location.scopeId }
}

/**
 * Session snapshots as objects of one S3 bucket, in the layout of the SDK's session
 * `S3Storage` (`[<prefix>/]<sessionId>/scopes/<scope>/<scopeId>/snapshots/`:
 * `snapshot_latest.json`, `manifest.json`, `immutable_history/snapshot_<uuid7>.json`,
 * JSON with two-space indentation and `Content-Type: application/json`), so sessions
 * written by either storage load in the other. Requests run natively with the same
 * timeouts, retries and in-flight cap as `S3Storage`.
 */
export class S3SnapshotStorage {
  #native
  #bucket
  #prefix

  /** @param {import('../../index.d.ts').S3SnapshotStorageOptions} options */
  constructor(options) {
    const bucket = options?.bucket
    if (typeof bucket !== 'string' || bucket.length === 0) {
      throw new TypeError('S3SnapshotStorage bucket must be a non-empty string')
    }
    warnUnknownOptions('S3SnapshotStorage', options, ['bucket', 'prefix', ...S3_CONNECTION_OPTION_NAMES], S3_OPTION_NOTES)
    this.#bucket = bucket
    this.#prefix = options.prefix ?? ''
    if (typeof this.#prefix !== 'string') throw new TypeError(`prefix must be a string, got ${describe(this.#prefix)}`)
    checkPathForm(this.#prefix, 'S3SnapshotStorage prefix')
    const connection = s3ConnectionOptions(options)
    this.#native = new native.NativeS3SnapshotStore(bucket, {
      ...connection,
      prefix: this.#prefix,
      region: connection.region ?? 'us-east-1',
    })
  }

  /** The bucket written to. */
  get bucket() {
    return this.#bucket
  }

  /** The key prefix, as given (`''` when none). */
  get prefix() {
    return this.#prefix
  }

  /** This storage, so that it can be passed directly as `SessionManagerConfig.storage`. */
  get snapshot() {
    return this
  }

  /** The object key of a file, validated as the SDK does (snapshot id first, then location). */
  #key(location, kind, snapshotId) {
    return this.#native.objectKey(scopeOf(location), kind, snapshotId)
  }

  /** The object key of a snapshot: the latest one, or the immutable `snapshotId`. */
  #snapshotKey(location, snapshotId, latest) {
    return latest ? this.#key(location, 'latest') : this.#key(location, 'history', String(snapshotId))
  }

  async #writeJSON(key, data) {
    const text = JSON.stringify(data, null, 2)
    await snapshotCall(() => this.#native.write(key, text))
  }

  async #readJSON(key) {
    const { text } = await snapshotCall(() => this.#native.read(key))
    if (text == null) return null
    try {
      return JSON.parse(text)
    } catch (error) {
      throw new SessionError(`Invalid JSON in S3 object ${key}`, { cause: error })
    }
  }

  /**
   * Saves a snapshot: to `snapshot_latest.json` when `isLatest`, else to
   * `immutable_history/snapshot_<snapshotId>.json`.
   */
  async saveSnapshot(params) {
    await this.#writeJSON(this.#snapshotKey(params.location, params.snapshotId, params.isLatest), params.snapshot)
  }

  /** Loads the latest snapshot, or the immutable one `snapshotId`; `null` when there is none. */
  async loadSnapshot(params) {
    return this.#readJSON(this.#snapshotKey(params.location, params.snapshotId, params.snapshotId === undefined))
  }

  /**
   * Immutable snapshot ids of a scope in chronological (UUID v7) order: after the
   * exclusive cursor `startAfter`, at most `limit` (`StartAfter`/`MaxKeys` pushed down to S3).
   */
  async listSnapshotIds(params) {
    const page = snapshotPage(params)
    if (page === null) return []
    const { location } = params
    return snapshotCall(() => this.#native.listIds(scopeOf(location), page.startAfter, page.limit))
  }

  /** Deletes every object of the session (`[<prefix>/]<sessionId>/`), 1,000 per request. */
  async deleteSession(params) {
    await snapshotCall(() => this.#native.deleteSession(params.sessionId))
  }

  /** The scope's manifest, or a fresh default (`schemaVersion` 1.0, now) when none was saved. */
  async loadManifest(params) {
    const manifest = await this.#readJSON(this.#key(params.location, 'manifest'))
    return manifest ?? defaultManifest()
  }

  /** Saves the scope's manifest. */
  async saveManifest(params) {
    await this.#writeJSON(this.#key(params.location, 'manifest'), params.manifest)
  }
}
