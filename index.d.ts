// Only the SDK's entry point is imported: its `storage` and `vended-plugins` entries declare
// types of @aws-sdk/client-s3 (an optional peer of the SDK), which a project with
// `skipLibCheck: false` and without that package could not compile. The SDK's unified
// `Storage` is described structurally below instead.
import type { LocalAgent, Model, Plugin, Tool, ToolResultBlock, ToolResultContent } from '@strands-agents/sdk'
import type { Snapshot, SnapshotLocation, SnapshotManifest, SnapshotStorage } from '@strands-agents/sdk'
import type { Encoding, OffloaderStats, OffloaderStorage, OffloadReference, PreviewMode, S3ConnectionOptions, UnifiedStorage } from './core.js'

// The storages, the token counter and the types every adapter shares are declared in
// the core's typings (`context-offloader/core`) and re-exported here.
export type {
  Encoding,
  FileStorageOptions,
  InMemoryStorageOptions,
  LifecycleOptions,
  OffloaderStats,
  OffloaderStorage,
  OffloadReference,
  PreviewMode,
  S3ConnectionOptions,
  S3StorageOptions,
  Storage,
  StorageStats,
  StoredContent,
  UnifiedStorage,
  UnifiedStorageMethods,
} from './core.js'
export { countTokens, countTokensSync, ENCODINGS, FileStorage, InMemoryStorage, S3Storage } from './core.js'

/**
 * How the offloader counts a tool result's tokens:
 * - `'model'` (default): the agent model's `countTokens`, as the SDK's plugin does;
 * - `'o200k_base'` / `'cl100k_base'`: native BPE counts (exact for OpenAI models using that
 *   encoding, an approximation for other model families), with an early-exit decision,
 *   and estimates for image, video and document blocks;
 * - `'heuristic'`: the SDK's characters/4 (JSON: compact length/2) rule, without calling the model.
 */
export type Tokenizer = 'model' | Encoding | 'heuristic'

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
 * Gives an SDK `Model` native counting for its `countTokens` (text, tool names and inputs,
 * JSON results, reasoning, system prompt and tool specs counted exactly; media by the
 * documented estimates), so the SDK's conversation and context managers get fast exact
 * counts. The model is changed in place and returned.
 */
export declare function withNativeTokenCounting<M extends Model>(model: M, encoding?: Encoding): M

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
