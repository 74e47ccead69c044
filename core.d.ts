// Typings of `context-offloader/core`: the framework-neutral engine. Nothing here
// imports an agent framework; the Strands plugin's typings (`context-offloader`) and each
// adapter's re-export what they share from this file.

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
 * How the preview of an offloaded result is built:
 * - `'head'` (default): the start of the result, as the SDK's plugin does;
 * - `'headTail'`: the first and last lines of each block, with how many lines (and which)
 *   were left out between them;
 * - `'structure'`: an outline of each JSON block (keys, value types, array lengths, sample
 *   values, line ranges); non-JSON blocks fall back to `'headTail'`.
 */
export type PreviewMode = 'head' | 'headTail' | 'structure'


/** What `stats()` returns ({@link Offloader.stats}, and the Strands plugin's): counters since it was created. */
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

/** One stored block of an offload ({@link OffloadedResult}, and the Strands plugin's `offload()`). */
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


/** How the core counts a tool result's tokens: native BPE encodings, or the SDK's characters/4 (JSON: compact length/2) rule. */
export type CoreTokenizer = Encoding | 'heuristic'

/** A tool call as `shouldOffload` sees it (the Strands plugin's shape). */
export interface OffloadCall {
  name: string
  toolUseId: string
  input: unknown
}

/** A tool result as `shouldOffload` sees it: the content as the adapter passed it. */
export interface OffloadCallResult {
  toolUseId: string
  status: 'success' | 'error'
  content: unknown
}

/** Options of {@link Offloader}: the Strands plugin's, where they apply, with the same defaults (but `tokenizer`). */
export interface OffloaderOptions {
  /**
   * Where offloaded content goes: an {@link OffloaderStorage} (ours or any other), or a
   * unified storage (keys under `offloader/`). Default: a new {@link InMemoryStorage}
   * (native memory; bound it with `ttlSeconds` or `maxBytes`).
   */
  storage?: OffloaderStorage | UnifiedStorage
  /** Results whose token count exceeds this are offloaded. Default 2,500. */
  maxResultTokens?: number
  /** Tokens of preview kept in context. Default 1,000. */
  previewTokens?: number
  /**
   * How tokens are counted. Default `'heuristic'` (there is no model to ask): text
   * characters/4, JSON compact length/2, as the SDK's default `countTokens`.
   */
  tokenizer?: CoreTokenizer
  /** With a native tokenizer: UTF-16 units per text block up to which the header's count is exact. Default 1,000,000. */
  exactCountLimit?: number
  /** Preview mode. Default `'head'`. */
  preview?: PreviewMode
  /** The head's share of a `'headTail'` preview's budget, from 0 to 1. Default 0.5. */
  headShare?: number
  /** What the model sees as references: storage references (`'paths'`, default) or session-scoped opaque ids. */
  references?: 'paths' | 'opaque'
  /** The retrieval tool: the SDK's (`'sdk'`, default) or `'extended'` (pages, `query`, `list`). */
  retrieval?: 'sdk' | 'extended'
  /** Lifetime of what is stored, in seconds, on storages that keep one (ours). Default: the storage's. */
  ttlSeconds?: number
  /** Names of tools whose results are never offloaded. */
  neverOffload?: string[]
  /** Decides per call: `true` offloads whatever the size, `false` never, `undefined` applies the size rule. */
  shouldOffload?: (call: OffloadCall, result: OffloadCallResult) => boolean | undefined | Promise<boolean | undefined>
  /** When storing fails: keep the whole result (`'keep'`, default) or only the preview (`'truncate'`). */
  onStorageError?: 'keep' | 'truncate'
  /** Also offload oversized error results. Default `false`. */
  offloadErrors?: boolean
  /** Whether the preview's guidance names the retrieval tool. Default true. */
  includeRetrievalTool?: boolean
}

/** A text content part. */
export interface OffloadTextPart {
  type: 'text'
  text: string
}

/** A JSON content part: data stored and previewed as JSON (so `query` works on it), e.g. an MCP result's `structuredContent`. */
export interface OffloadJsonPart {
  type: 'json'
  json: unknown
}

/** An image content part: bytes (or base64) with a media type, or a URL (kept in context as it is). */
export interface OffloadImagePart {
  type: 'image'
  data?: Uint8Array | ArrayBuffer | string
  mediaType?: string
  url?: string
}

/** A file content part: bytes (or base64) with a media type, or a URL (kept in context as it is). */
export interface OffloadFilePart {
  type: 'file'
  data?: Uint8Array | ArrayBuffer | string
  mediaType?: string
  filename?: string
  url?: string
}

/** A content part of a tool result. */
export type OffloadPart = OffloadTextPart | OffloadJsonPart | OffloadImagePart | OffloadFilePart

/** What {@link Offloader.offloadResult} takes: one tool call's result. */
export interface OffloadResultInput {
  /** The tool's name (`neverOffload`, `list`). */
  toolName: string
  /** The tool call's id: stored blocks are keyed `<toolCallId>_<i>`. */
  toolCallId: string
  /**
   * The result: a string, an array of content parts (every item a text part with a string
   * `text`, a JSON part with `json`, or an image or file part with `data` or a `url`), or any other
   * JSON-serialisable data (stored and previewed as JSON).
   */
  content: unknown
  /** The session opaque references are issued in (and stored content is tagged with); default: the offloader's own. */
  sessionId?: string
  /** Whether the result is an error (offloaded only with `offloadErrors`). */
  isError?: boolean
  /** The tool call's input (for `shouldOffload`). */
  input?: unknown
  /**
   * Offload this call once: the same session, tool call id and content again (a
   * conversation re-sent) answers the first offload's result without storing anything,
   * as long as what it stored can still be read. Remembered in memory, and in the
   * storage (so it holds across a restart) for a session given by `sessionId`, and
   * without one when references are storage references (`references: 'paths'`).
   */
  reuse?: boolean
}

/** What {@link Offloader.offloadResult} resolves with when a result is offloaded. */
export interface OffloadedResult {
  /** The text that replaces the result: header, guidance, preview and references. */
  text: string
  /** The replacement as content parts: `text`, then one placeholder per stored image or file (and parts kept as they were). */
  parts: OffloadPart[]
  /** The stored blocks (empty when storing failed with `onStorageError: 'truncate'`). */
  references: OffloadReference[]
  /** The result's tokens, as the header shows them. */
  tokens: number
  /** Whether `tokens` is an estimate (shown as `~N`). */
  approximate: boolean
  /** Whether storing failed and only the preview was kept (`onStorageError: 'truncate'`). */
  truncated: boolean
}

/** The retrieval tool's input (`null` for an optional field means absent). */
export interface RetrievalInput {
  reference?: string | null
  pattern?: string | null
  line_range?: { start: number; end: number } | null
  context_lines?: number | null
  /** Extended retrieval: a jq expression over JSON content. */
  query?: string | null
  /** Extended retrieval: the page of a long answer (1-indexed). */
  page?: number | null
  /** Extended retrieval: list what was offloaded in the session. */
  list?: boolean | null
}

/** The `retrieve_offloaded_content` tool in a framework-neutral form. */
export interface RetrievalTool {
  readonly name: 'retrieve_offloaded_content'
  readonly description: string
  /** The input's JSON Schema (the Strands plugin's, byte for byte). */
  readonly inputSchema: Record<string, unknown>
  /** Answers a call (what the Strands plugin's tool answers, as text); never rejects on bad input. */
  execute(input: RetrievalInput, context?: { sessionId?: string | null }): Promise<string>
}

/**
 * Offloads large tool results for any agent framework: decides by tokens, stores the
 * result, and answers with a preview and references; its {@link Offloader.retrievalTool}
 * lets the model grep, slice, page and query what was stored.
 */
export declare class Offloader {
  constructor(options?: OffloaderOptions)
  /** The storage content is offloaded to. */
  readonly storage: OffloaderStorage | UnifiedStorage
  /** Offloads one result when it is too large; `null` when it stays as it is. */
  offloadResult(call: OffloadResultInput): Promise<OffloadedResult | null>
  /** The retrieval tool. */
  readonly retrievalTool: RetrievalTool
  /** Counters since the offloader was created. */
  stats(): OffloaderStats
}

/** The retrieval tool's name. */
export declare const RETRIEVAL_TOOL_NAME: 'retrieve_offloaded_content'

// Only what is declared with `export` is exported (the storages' base class is not).
export {}
