import type { LocalAgent, Plugin, Tool } from '@strands-agents/sdk'
import type { Storage as UnifiedStorage } from '@strands-agents/sdk/storage'
import type { Snapshot, SnapshotLocation, SnapshotManifest, SnapshotStorage } from '@strands-agents/sdk'

/**
 * What a stored block comes back as.
 */
export interface StoredContent {
  /** The raw bytes that were stored. */
  content: Uint8Array
  /** The MIME type given at store time (`application/octet-stream` when unknown). */
  contentType: string
}

/**
 * The offloader storage interface, identical to the SDK's
 * (`@strands-agents/sdk/vended-plugins/context-offloader`): any object with these two
 * methods works in our plugin, and our storages work in the SDK's plugin.
 */
export interface OffloaderStorage {
  /** Stores one content block and returns a reference to it. */
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  /** Returns a stored block; rejects with `Reference not found: <reference>` when unknown. */
  retrieve(reference: string): Promise<StoredContent>
}

/** Options of {@link ContextOffloader}; the same as the SDK plugin's. */
export interface ContextOffloaderConfig {
  /**
   * Where offloaded blocks go: an {@link OffloaderStorage} (ours or any other), or one
   * of the SDK's unified storages (keys under `offloader/`). When omitted, the agent's
   * `storage` is used, else in-memory storage.
   */
  storage?: OffloaderStorage | UnifiedStorage
  /** Results whose token count exceeds this are offloaded. Default 2,500. */
  maxResultTokens?: number
  /** Tokens of preview kept in context (4 characters per token). Default 1,000. */
  previewTokens?: number
  /** Register the `retrieve_offloaded_content` tool. Default true. */
  includeRetrievalTool?: boolean
  /** Agent cycles after which offloaded entries are evicted; `null` disables. Default 20. */
  evictAfterCycles?: number | null
}

/**
 * Plugin that offloads oversized tool results to storage, replacing them with a
 * preview and references, and gives the agent a tool to grep or slice them.
 * A drop-in replacement for the SDK's `ContextOffloader`.
 */
export declare class ContextOffloader implements Plugin {
  /** Plugin name, as the SDK's. */
  readonly name: 'strands:context-offloader'
  constructor(config?: ContextOffloaderConfig)
  /** Registers the plugin's hooks on an agent (called by the SDK). */
  initAgent(agent: LocalAgent): void
  /** The retrieval tool, unless `includeRetrievalTool` is false. */
  getTools(): Tool[]
}

/**
 * The SDK's unified `Storage` (`@strands-agents/sdk/storage`) as our storages
 * implement it: keys normalised as the SDK's `normalizeKey` (runs of `/` collapsed,
 * leading and trailing `/` stripped; empty keys, `..` segments and backslashes
 * rejected with the SDK's `StorageError`), listings sorted.
 */
export interface UnifiedStorageMethods {
  /** Stores `data` under `key`, replacing any value. */
  write(key: string, data: Uint8Array): Promise<void>
  /** The bytes under `key` (a copy), or `null`. */
  read(key: string): Promise<Uint8Array | null>
  /** Removes `key`; a no-op when it does not exist. */
  delete(key: string): Promise<void>
  /** Full keys starting with `prefix`, sorted; `''` lists every key. */
  list(prefix: string): Promise<string[]>
  /** A view with every key under `prefix` (composable). */
  namespace(prefix: string): UnifiedStorageMethods
}

/**
 * Offloaded content held in native memory (off the V8 heap), with turn-based
 * eviction: entries neither stored nor retrieved within `evictAfterTurns` agent
 * cycles are dropped. References look like `mem_<n>_<key>`.
 *
 * Also the SDK's unified `Storage` (keys in a separate native map, marked ephemeral),
 * so it works as `new Agent({ storage })`.
 */
export declare class InMemoryStorage implements OffloaderStorage, UnifiedStorage, UnifiedStorageMethods {
  /** The default eviction window (20 cycles). */
  static readonly DEFAULT_EVICT_AFTER_TURNS: number
  /** @param evictAfterTurns idle cycles before eviction; `null` disables. Default 20. */
  constructor(evictAfterTurns?: number | null)
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  retrieve(reference: string): Promise<StoredContent>
  write(key: string, data: Uint8Array): Promise<void>
  read(key: string): Promise<Uint8Array | null>
  delete(key: string): Promise<void>
  list(prefix: string): Promise<string[]>
  namespace(prefix: string): UnifiedStorageMethods
  /** Removes all stored content (offloaded blocks and unified-storage values). */
  clear(): void
  /** Number of offloaded blocks held (unified-storage values not counted). */
  readonly size: number
  /** Total bytes of offloaded blocks held in native memory. */
  readonly byteLength: number
}

/** Options of {@link FileStorage}. */
export interface FileStorageOptions {
  /** Directory for the artifacts (created on first use). Default `./artifacts`. */
  artifactDir?: string
  /** fsync every artifact and the directory before `store` resolves. Default false. */
  durable?: boolean
}

/**
 * Offloaded content as files in one directory, named as the SDK names them
 * (`<ms>_<n>_<key><ext>`), written atomically, with content types that survive
 * restarts and concurrent writers. `retrieve` never reads outside the directory.
 *
 * Also the SDK's unified `Storage`, with the files of the SDK's `LocalFileStorage`,
 * so it works as `new Agent({ storage })`.
 */
export declare class FileStorage implements OffloaderStorage, UnifiedStorage, UnifiedStorageMethods {
  /** @param options the directory, or {@link FileStorageOptions}. Default `./artifacts`. */
  constructor(options?: string | FileStorageOptions)
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  retrieve(reference: string): Promise<StoredContent>
  /**
   * Unified storage: `key` is the file `<dir>/<key>`, laid out as the SDK's
   * `LocalFileStorage` lays it out. Keys whose first segment is an artifact file
   * name (`<ms>_<n>_...`), `.metadata.json`, `.metadata.journal` or `.tmp-*` are
   * reserved for offloaded artifacts and rejected; `list` skips them.
   */
  write(key: string, data: Uint8Array): Promise<void>
  read(key: string): Promise<Uint8Array | null>
  delete(key: string): Promise<void>
  list(prefix: string): Promise<string[]>
  namespace(prefix: string): UnifiedStorageMethods
  /** The artifact directory, as given. */
  readonly artifactDir: string
}

/** How our S3 storages reach the server (shared by {@link S3Storage} and {@link S3SnapshotStorage}). */
export interface S3ConnectionOptions {
  /** Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:3900`. */
  endpoint?: string
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`). Default false. */
  forcePathStyle?: boolean
  /** Static credentials; default the standard AWS provider chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  /** Bound on connecting and on each attempt of a request, in ms. Default 30000. */
  timeoutMs?: number
  /** Attempts per request (throttling, 5xx and connection errors are retried with backoff). Default 3. */
  maxAttempts?: number
  /** Requests in flight at once for this storage. Default 8. */
  maxInFlight?: number
}

/** Options of {@link S3Storage}. */
export interface S3StorageOptions extends S3ConnectionOptions {
  /** Key prefix; trailing slashes are normalised to one (`a/b//` → `a/b/`). Default none. */
  prefix?: string
  /** Region; default the environment's (`AWS_REGION`, profile), else `us-east-1`. */
  region?: string
}

/**
 * Offloaded content as S3 objects (`s3://<bucket>/<prefix><ms>_<n>_<key>`), the
 * content type as the object's Content-Type. Requests run natively with bounded
 * timeouts, retries and concurrency; large bodies go up as multipart uploads.
 *
 * Also the SDK's unified `Storage`, with the object keys of the SDK's unified
 * `S3Storage` (`<prefix><key>`), so it works as `new Agent({ storage })` and reads
 * what the SDK's wrote.
 */
export declare class S3Storage implements OffloaderStorage, UnifiedStorage, UnifiedStorageMethods {
  constructor(bucket: string, options?: S3StorageOptions)
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  retrieve(reference: string): Promise<StoredContent>
  /**
   * Unified storage: `key` (normalised as the SDK's `normalizeKey`) is the object
   * `<prefix><key>`, the prefix's empty segments dropped as the SDK drops them.
   */
  write(key: string, data: Uint8Array): Promise<void>
  read(key: string): Promise<Uint8Array | null>
  delete(key: string): Promise<void>
  list(prefix: string): Promise<string[]>
  namespace(prefix: string): UnifiedStorageMethods
  /** The bucket objects are written to. */
  readonly bucket: string
  /** The normalised key prefix (`''` or ending in `/`). */
  readonly prefix: string
}

/** Options of {@link FileSnapshotStorage}. */
export interface FileSnapshotStorageOptions {
  /** Root directory of all sessions (created on first save). */
  baseDir: string
  /** fsync every snapshot file and directory entry before a save resolves. Default false. */
  durable?: boolean
}

/**
 * Session snapshots as files, in the layout of the SDK's session `FileStorage`
 * (`<baseDir>/<sessionId>/scopes/<scope>/<scopeId>/snapshots/`), so either one reads
 * what the other wrote. Writes are atomic (temporary file + rename); file I/O runs on
 * worker threads. Pass it as `new SessionManager({ storage: { snapshot: storage } })`
 * (or directly as `storage`).
 */
export declare class FileSnapshotStorage implements SnapshotStorage {
  /** @param options the base directory, or {@link FileSnapshotStorageOptions}. */
  constructor(options: string | FileSnapshotStorageOptions)
  /** The base directory, as given. */
  readonly baseDir: string
  /** This storage, so it can be passed directly as `SessionManagerConfig.storage`. */
  readonly snapshot: this
  saveSnapshot(params: { location: SnapshotLocation; snapshotId: string; isLatest: boolean; snapshot: Snapshot }): Promise<void>
  loadSnapshot(params: { location: SnapshotLocation; snapshotId?: string }): Promise<Snapshot | null>
  listSnapshotIds(params: { location: SnapshotLocation; limit?: number; startAfter?: string }): Promise<string[]>
  deleteSession(params: { sessionId: string }): Promise<void>
  loadManifest(params: { location: SnapshotLocation }): Promise<SnapshotManifest>
  saveManifest(params: { location: SnapshotLocation; manifest: SnapshotManifest }): Promise<void>
}

/** Options of {@link S3SnapshotStorage}. */
export interface S3SnapshotStorageOptions extends S3ConnectionOptions {
  /** The bucket. */
  bucket: string
  /** Key prefix: objects are `<prefix>/<sessionId>/...`, used as given (as the SDK). Default none. */
  prefix?: string
  /** Region. Default `us-east-1` (as the SDK's session `S3Storage`). */
  region?: string
}

/**
 * Session snapshots as S3 objects, in the layout of the SDK's session `S3Storage`
 * (`[<prefix>/]<sessionId>/scopes/<scope>/<scopeId>/snapshots/`, JSON objects with
 * `Content-Type: application/json`), so either one reads what the other wrote.
 * Pass it as `new SessionManager({ storage: { snapshot: storage } })` (or directly as `storage`).
 */
export declare class S3SnapshotStorage implements SnapshotStorage {
  constructor(options: S3SnapshotStorageOptions)
  /** The bucket. */
  readonly bucket: string
  /** The key prefix, as given (`''` when none). */
  readonly prefix: string
  /** This storage, so it can be passed directly as `SessionManagerConfig.storage`. */
  readonly snapshot: this
  saveSnapshot(params: { location: SnapshotLocation; snapshotId: string; isLatest: boolean; snapshot: Snapshot }): Promise<void>
  loadSnapshot(params: { location: SnapshotLocation; snapshotId?: string }): Promise<Snapshot | null>
  listSnapshotIds(params: { location: SnapshotLocation; limit?: number; startAfter?: string }): Promise<string[]>
  deleteSession(params: { sessionId: string }): Promise<void>
  loadManifest(params: { location: SnapshotLocation }): Promise<SnapshotManifest>
  saveManifest(params: { location: SnapshotLocation; manifest: SnapshotManifest }): Promise<void>
}
