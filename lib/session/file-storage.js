// FileSnapshotStorage: a native file-backed SnapshotStorage for the SDK's SessionManager,
// in the layout of the SDK's session `FileStorage`. JSON is encoded and parsed here;
// every file operation runs in Rust on a worker thread.
import { join as joinPath } from 'node:path'
import { native } from '../native.js'
import { checkPathForm, describe } from '../numbers.js'
import { warnUnknownOptions } from '../option-names.js'
import { SessionError } from '../sdk.js'
import { defaultManifest, snapshotPage, validateIdentifier, validateScope } from './validation.js'

/**
 * Session snapshots as files, in the layout of the SDK's session `FileStorage`
 * (`<baseDir>/<sessionId>/scopes/<scope>/<scopeId>/snapshots/`: `snapshot_latest.json`,
 * `manifest.json`, `immutable_history/snapshot_<uuid7>.json`), so either storage reads
 * what the other wrote. Every write goes to a temporary file in the same directory and
 * is renamed into place: a crash leaves the previous snapshot, never a torn one.
 *
 * Use it where the SDK's session `FileStorage` goes:
 * `new SessionManager({ sessionId, storage: { snapshot: new FileSnapshotStorage(dir) } })`
 * (passing the storage itself as `storage` works too).
 */
export class FileSnapshotStorage {
  #baseDir
  #native

  /**
   * @param {string | { baseDir: string, durable?: boolean }} options the base directory,
   *   or options; `durable: true` fsyncs every file and directory entry before a save resolves.
   */
  constructor(options) {
    const baseDir = typeof options === 'string' ? options : options?.baseDir
    if (typeof baseDir !== 'string' || baseDir.length === 0) {
      throw new TypeError('FileSnapshotStorage baseDir must be a non-empty string')
    }
    checkPathForm(baseDir, 'FileSnapshotStorage baseDir')
    warnUnknownOptions('FileSnapshotStorage', options, ['baseDir', 'durable'])
    const durable = typeof options === 'object' && options !== null ? (options.durable ?? false) : false
    if (typeof durable !== 'boolean') throw new TypeError(`FileSnapshotStorage durable must be a boolean, got ${describe(durable)}`)
    this.#baseDir = baseDir
    this.#native = new native.NativeSnapshotDir(baseDir, durable)
  }

  /** The base directory, as given. */
  get baseDir() {
    return this.#baseDir
  }

  /** This storage, so that it can be passed directly as `SessionManagerConfig.storage`. */
  get snapshot() {
    return this
  }

  /** Validates a location (as the SDK, in its order) and returns the file's path. */
  #pathOf(location, filename) {
    validateIdentifier(location.sessionId)
    validateScope(location.scope)
    validateIdentifier(location.scopeId)
    return joinPath(this.#baseDir, location.sessionId, 'scopes', location.scope, location.scopeId, 'snapshots', filename)
  }

  /** `[kind, snapshotId, path]` of a snapshot file, validated as the SDK does. */
  #snapshotFile(location, snapshotId, latest) {
    if (latest) return ['latest', undefined, this.#pathOf(location, 'snapshot_latest.json')]
    validateIdentifier(snapshotId)
    const path = this.#pathOf(location, `immutable_history/snapshot_${snapshotId}.json`)
    return ['history', String(snapshotId), path]
  }

  /** `[kind, snapshotId, path]` of the scope's manifest. */
  #manifestFile(location) {
    return ['manifest', undefined, this.#pathOf(location, 'manifest.json')]
  }

  async #writeJSON(location, [kind, snapshotId, path], data) {
    try {
      const text = JSON.stringify(data, null, 2)
      await this.#native.write(location, kind, snapshotId, text)
    } catch (error) {
      throw new SessionError(`Failed to write file ${path}`, { cause: error })
    }
  }

  async #readJSON(location, [kind, snapshotId, path]) {
    let text
    try {
      text = await this.#native.read(location, kind, snapshotId)
    } catch (error) {
      throw new SessionError(`File system error reading ${path}`, { cause: error })
    }
    if (text === null) return null
    try {
      return JSON.parse(text)
    } catch (error) {
      throw new SessionError(`Invalid JSON in file ${path}`, { cause: error })
    }
  }

  /**
   * Saves a snapshot: to `snapshot_latest.json` when `isLatest`, else to
   * `immutable_history/snapshot_<snapshotId>.json`. Saves to one file land in call order.
   */
  async saveSnapshot(params) {
    const file = this.#snapshotFile(params.location, params.snapshotId, params.isLatest)
    await this.#writeJSON(params.location, file, params.snapshot)
  }

  /** Loads the latest snapshot, or the immutable one `snapshotId`; `null` when there is none. */
  async loadSnapshot(params) {
    const file = this.#snapshotFile(params.location, params.snapshotId, params.snapshotId === undefined)
    return this.#readJSON(params.location, file)
  }

  /**
   * Immutable snapshot ids of a scope in chronological (UUID v7) order: after the
   * exclusive cursor `startAfter`, at most `limit` of them.
   */
  async listSnapshotIds(params) {
    const page = snapshotPage(params)
    if (page === null) return []
    const { location } = params
    this.#pathOf(location, 'immutable_history')
    try {
      return await this.#native.listIds(location, page.startAfter, page.limit)
    } catch (error) {
      throw new SessionError(`Failed to list snapshots for session ${location.sessionId}`, { cause: error })
    }
  }

  /** Removes every file of the session (`<baseDir>/<sessionId>/`); no-op when absent. */
  async deleteSession(params) {
    validateIdentifier(params.sessionId)
    joinPath(this.#baseDir, params.sessionId)
    try {
      await this.#native.deleteSession(params.sessionId)
    } catch (error) {
      throw new SessionError(`Failed to delete session ${params.sessionId}`, { cause: error })
    }
  }

  /** The scope's manifest, or a fresh default (`schemaVersion` 1.0, now) when none was saved. */
  async loadManifest(params) {
    const manifest = await this.#readJSON(params.location, this.#manifestFile(params.location))
    return manifest ?? defaultManifest()
  }

  /** Saves the scope's manifest atomically. */
  async saveManifest(params) {
    await this.#writeJSON(params.location, this.#manifestFile(params.location), params.manifest)
  }
}
