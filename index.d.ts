// Only the SDK's entry point is imported: its `storage` and `vended-plugins` entries declare
// types of @aws-sdk/client-s3 (an optional peer of the SDK), which a project with
// `skipLibCheck: false` and without that package could not compile. The SDK's unified
// `Storage` is described structurally below instead.
import type { LocalAgent, Model, Plugin, Tool, ToolResultBlock, ToolResultContent } from '@strands-agents/sdk'
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

/**
 * The SDK's name for {@link OffloaderStorage} (`Storage` of
 * `@strands-agents/sdk/vended-plugins/context-offloader`): code written against the
 * SDK's type compiles unchanged with `import type { Storage } from 'context-offloader'`.
 */
export type Storage = OffloaderStorage

/**
 * The SDK's unified `Storage` (`@strands-agents/sdk/storage`), described by its shape:
 * every storage of the SDK (and any object with these methods) fits it, without this
 * package's typings importing the SDK's storage module.
 */
export interface UnifiedStorage {
  /** Stores `data` under `key`, replacing any value. */
  write(key: string, data: Uint8Array): Promise<void>
  /** The bytes under `key`, or `null`. */
  read(key: string): Promise<Uint8Array | null>
  /** Removes `key`. */
  delete(key: string): Promise<void>
  /** The keys matching `query` (a key prefix). */
  list(query: string): Promise<string[]>
  /** A view with every key under `prefix` (optional). */
  namespace?(prefix: string): UnifiedStorage
}

/** The encodings of {@link countTokens} (OpenAI's BPE vocabularies, bundled). */
export type Encoding = 'o200k_base' | 'cl100k_base'

/**
 * How the offloader counts a tool result's tokens:
 * - `'model'` (default): the agent model's `countTokens`, as the SDK's plugin does;
 * - `'o200k_base'` / `'cl100k_base'`: native BPE counts (exact for OpenAI models using that
 *   encoding, an approximation for other model families), with an early-exit decision,
 *   and estimates for image, video and document blocks;
 * - `'heuristic'`: the SDK's characters/4 (JSON: compact length/2) rule, without calling the model.
 */
export type Tokenizer = 'model' | Encoding | 'heuristic'

/**
 * How the preview of an offloaded result is built:
 * - `'head'` (default): the start of the result, as the SDK's plugin does;
 * - `'headTail'`: the first and last lines of each block, with how many lines (and which)
 *   were left out between them;
 * - `'structure'`: an outline of each JSON block (keys, value types, array lengths, sample
 *   values, line ranges); non-JSON blocks fall back to `'headTail'`.
 */
export type PreviewMode = 'head' | 'headTail' | 'structure'

/** A tool use as the SDK passes it to hooks. */
export interface OffloadToolUse {
  name: string
  toolUseId: string
  input: unknown
}

/** Options of {@link ContextOffloader}: the SDK plugin's, plus counting, preview and per-tool control. */
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
  /**
   * Lifetime of what the plugin stores, in seconds (positive; fractions allowed), on
   * storages that keep one (ours); overrides the storage's `ttlSeconds`. Default: the
   * storage's (none: kept until removed). Stores also carry the agent's `sessionId`.
   */
  ttlSeconds?: number
  /** How tokens are counted. Default `'model'` (the SDK's behaviour). */
  tokenizer?: Tokenizer
  /**
   * With a native tokenizer: UTF-16 units per text block up to which the preview header's
   * count is exact; longer blocks are estimated from samples and the count shows as `~N`.
   * Default 1,000,000.
   */
  exactCountLimit?: number
  /** Preview mode. Default `'head'` (the SDK's). */
  preview?: PreviewMode
  /**
   * The share of each block's preview budget given to its first lines in a `'headTail'`
   * preview (and in `'structure'` for blocks that are not JSON): a number from 0 (all to
   * the last lines) to 1 (all to the first lines); budget one side does not use goes to
   * the other. Default 0.5.
   */
  headShare?: number
  /**
   * Decides per call: `true` offloads whatever the size, `false` never offloads this
   * result, `undefined` applies the size rule. May return a promise. If it throws, the
   * size rule applies (with a warning).
   */
  shouldOffload?: (toolUse: OffloadToolUse, result: ToolResultBlock) => boolean | undefined | Promise<boolean | undefined>
  /** Names of tools whose results are never offloaded (for results parsed by code). */
  neverOffload?: string[]
  /**
   * When storing fails: `'keep'` (default, the SDK's) keeps the whole result in context;
   * `'truncate'` keeps only the preview, with a marker saying the rest was dropped and why.
   */
  onStorageError?: 'keep' | 'truncate'
  /**
   * What the model sees as references. `'paths'` (default, the SDK's): the storage's
   * references (file paths, `s3://` URIs, `mem_` names). `'opaque'`: short unguessable
   * ids (`ref_` and 96 random bits) that the retrieval tool answers only for the agent
   * session they were given to; any other id or raw storage reference is "not found".
   * The ids are kept in the storage under the session (ours and the SDK's unified
   * storages), so they survive a restart with the same session id.
   */
  references?: 'paths' | 'opaque'
  /**
   * The retrieval tool. `'sdk'` (default): the SDK's tool, byte for byte. `'extended'`:
   * answers longer than the output budget come in pages; with a native `tokenizer` the
   * budget is `maxResultTokens` tokens of that encoding (else `maxResultTokens × 4`
   * characters); `query` runs a jq expression over JSON content; `list: true` shows what
   * was offloaded in the session.
   */
  retrieval?: 'sdk' | 'extended'
  /** Also offload oversized error results (stack traces, failed builds). Default `false` (the SDK's). */
  offloadErrors?: boolean
}

/** What {@link ContextOffloader.stats} returns: counters since the plugin was created. */
export interface OffloaderStats {
  /** Tool results (and `offload()` calls) offloaded. */
  offloads: number
  /** Blocks stored. */
  blocksStored: number
  /** Bytes stored (UTF-8 of texts, bytes of media). */
  bytesOffloaded: number
  /** Tokens of the offloaded results, as their headers show them. */
  tokensBefore: number
  /** Tokens of the texts that replaced them (native count with a native tokenizer, else 4 characters per token). */
  tokensAfter: number
  /** `tokensBefore - tokensAfter`: tokens kept out of context. */
  tokensKeptOut: number
  /** Retrieval tool calls by mode. */
  retrievals: { full: number; pattern: number; lineRange: number; head: number; query: number; list: number }
  /** Pages served by extended retrieval. */
  pagesServed: number
  /** Offloads whose storage failed, and retrieval answers that were errors. */
  errors: { offload: number; retrieval: number }
}

/** One stored block of an {@link OffloadResult}. */
export interface OffloadReference {
  /** The reference the model sees and passes to `retrieve_offloaded_content`: with `references: 'opaque'`, an opaque id. */
  reference: string
  /** With `references: 'opaque'`: the storage's own reference behind the id (for `storage.retrieve`). */
  storageReference?: string
  /** The stored content type. */
  contentType: string
  /** The description shown next to the reference (`text, 12,345 chars`). */
  description: string
}

/** What {@link ContextOffloader.offload} returns. */
export interface OffloadResult {
  /** The preview text the plugin puts in the conversation (header, guidance, preview, references). */
  text: string
  /** The replacement content: the preview text block, then one placeholder per media block. */
  content: ToolResultContent[]
  /** The stored blocks (empty when storing failed with `onStorageError: 'truncate'`). */
  references: OffloadReference[]
  /** Token count shown in the header. */
  tokens: number
  /** Whether `tokens` is an estimate (shown as `~N`). */
  approximate: boolean
  /** Whether storing failed and only the preview was kept (`onStorageError: 'truncate'`). */
  truncated: boolean
}

/** Options of {@link ContextOffloader.offload}. */
export interface OffloadOptions {
  /** Key of the stored blocks (`<key>_<index>`), in place of a tool use id. */
  key: string
  /** The agent whose storage and model to use; default: the agent the plugin was last added to. */
  agent?: LocalAgent
  /** Lifetime of what this call stores, in seconds; default: the plugin's `ttlSeconds`. */
  ttlSeconds?: number
  /** Session the stored blocks belong to; default: the agent's `sessionId`. */
  sessionId?: string
  /** The tool name shown for these blocks in the retrieval tool's `list`; default: `key`. */
  toolName?: string
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
  /**
   * Offloads content by hand (large user input, a file the app loaded), whatever its size:
   * stores every block under `<key>_<i>` and returns the preview text and references the
   * plugin would have produced for a tool result with this content.
   */
  offload(content: string | ToolResultContent | ToolResultContent[], options: OffloadOptions): Promise<OffloadResult>
  /** Counters since the plugin was created (offloads, bytes and tokens kept out, retrievals, pages, errors). */
  stats(): OffloaderStats
}

/**
 * Number of BPE tokens of `text` in an OpenAI encoding (default `'o200k_base'`), counted
 * natively on a worker thread (special-token text counts as ordinary text). Exact for
 * OpenAI models using that encoding; other model families tokenize differently.
 */
export declare function countTokens(text: string, encoding?: Encoding): Promise<number>
/** {@link countTokens} on the calling thread (for short texts). */
export declare function countTokensSync(text: string, encoding?: Encoding): number
/** The encodings {@link countTokens} accepts. */
export declare const ENCODINGS: readonly Encoding[]
/**
 * Gives an SDK `Model` native counting for its `countTokens` (text, tool names and inputs,
 * JSON results, reasoning, system prompt and tool specs counted exactly; media by the
 * documented estimates), so the SDK's conversation and context managers get fast exact
 * counts. The model is changed in place and returned.
 */
export declare function withNativeTokenCounting<M extends Model>(model: M, encoding?: Encoding): M

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
 * What our three storages share: the SDK offloader's `store`/`retrieve` and the SDK's
 * unified `Storage`, over one native store. (Not exported: a type of the declarations only.)
 */
// Only what is declared with `export` is exported (the base class below is not).
export {}

/** What a storage holds ({@link InMemoryStorage.stats}, {@link FileStorage.stats}). */
export interface StorageStats {
  /** Live artifacts (expired ones are not counted, even before a sweep). */
  artifacts: number
  /** Their content bytes, each artifact counted in full. */
  bytes: number
  /** Bytes actually held: identical content counted once when deduplicated. */
  storedBytes: number
  /** Artifacts and bytes per session id (artifacts stored without one are not listed). */
  sessions: Record<string, { artifacts: number; bytes: number }>
}

/**
 * The artifact lifecycle of {@link InMemoryStorage} and {@link FileStorage}. Every
 * option is off by default (the SDK's behaviour).
 */
export interface LifecycleOptions {
  /** Default lifetime of an artifact in seconds (positive; fractions allowed). An expired reference is `Reference not found (expired): <ref>` at once. */
  ttlSeconds?: number
  /** Most bytes of content kept (after dedup; a positive integer): least recently stored or retrieved artifacts are evicted first; larger content is refused. */
  maxBytes?: number
  /** Store identical content (same bytes) once, by SHA-256; every reference stays distinct. */
  dedup?: boolean
  /** Sweep expired artifacts every this many seconds (a positive integer) on an unref'd timer; `close()` stops it. */
  cleanupIntervalSeconds?: number
  /** Milliseconds since the epoch for TTLs (default `Date.now`); for tests and simulations. */
  clock?: () => number
}

declare abstract class NativeBackedStorage implements OffloaderStorage, UnifiedStorage, UnifiedStorageMethods {
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  retrieve(reference: string): Promise<StoredContent>
  /** Removes every artifact whose TTL ran out; resolves with how many. */
  cleanupExpired(): Promise<number>
  /** Removes every artifact stored for `sessionId`; resolves with how many. */
  deleteSession(sessionId: string): Promise<number>
  /** What the storage holds now. */
  stats(): Promise<StorageStats>
  /** Stops the background sweep, if any (stored content stays). */
  close(): void
  write(key: string, data: Uint8Array): Promise<void>
  read(key: string): Promise<Uint8Array | null>
  delete(key: string): Promise<void>
  list(prefix: string): Promise<string[]>
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
export declare class InMemoryStorage extends NativeBackedStorage {
  /** The default eviction window (20 cycles). */
  static readonly DEFAULT_EVICT_AFTER_TURNS: number
  /**
   * @param options idle cycles before eviction (`null` disables; default 20), or
   *   {@link InMemoryStorageOptions}.
   */
  constructor(options?: number | null | InMemoryStorageOptions)
  /** Removes all stored content (offloaded blocks and unified-storage values). */
  clear(): void
  /** Number of offloaded blocks held (unified-storage values not counted). */
  readonly size: number
  /** Total bytes of offloaded blocks held in native memory. */
  readonly byteLength: number
}

/** Options of {@link InMemoryStorage}. */
export interface InMemoryStorageOptions extends LifecycleOptions {
  /** Idle cycles before eviction; `null` disables. Default 20. */
  evictAfterTurns?: number | null
}

/** Options of {@link FileStorage}. */
export interface FileStorageOptions extends LifecycleOptions {
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
export declare class FileStorage extends NativeBackedStorage {
  /** @param options the directory, or {@link FileStorageOptions}. Default `./artifacts`. */
  constructor(options?: string | FileStorageOptions)
  /**
   * Unified storage: `key` is the file `<dir>/<key>`, laid out as the SDK's
   * `LocalFileStorage` lays it out. Keys whose first segment is an artifact file
   * name (`<ms>_<n>_...`), `.metadata.json`, `.metadata.journal`, `.metadata.lock`, `.blobs` or `.tmp-*` are
   * reserved for offloaded artifacts and rejected; `list` skips them.
   */
  write(key: string, data: Uint8Array): Promise<void>
  /** Unified storage: a view rooted at `<dir>/<prefix>`, as the SDK's `LocalFileStorage.namespace`. */
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

/**
 * Options of {@link S3Storage}: the key prefix, the connection ({@link S3ConnectionOptions}:
 * `region`, `endpoint`, `forcePathStyle`, `credentials`, `timeoutMs`, `maxAttempts`,
 * `maxInFlight`) and the lifecycle options S3 supports (`ttlSeconds`,
 * `cleanupIntervalSeconds`, `clock`). The SDK's `s3Client` is not taken: requests run natively.
 */
export interface S3StorageOptions extends S3ConnectionOptions, Pick<LifecycleOptions, 'ttlSeconds' | 'cleanupIntervalSeconds' | 'clock'> {
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
export declare class S3Storage extends NativeBackedStorage {
  constructor(bucket: string, options?: S3StorageOptions)
  /**
   * Unified storage: `key` (normalised as the SDK's `normalizeKey`) is the object
   * `<prefix><key>`, the prefix's empty segments dropped as the SDK drops them.
   */
  write(key: string, data: Uint8Array): Promise<void>
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
