import type { LocalAgent, Plugin, Tool } from '@strands-agents/sdk'
import type { Storage as UnifiedStorage } from '@strands-agents/sdk/storage'

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
 * Offloaded content held in native memory (off the V8 heap), with turn-based
 * eviction: entries neither stored nor retrieved within `evictAfterTurns` agent
 * cycles are dropped. References look like `mem_<n>_<key>`.
 */
export declare class InMemoryStorage implements OffloaderStorage {
  /** The default eviction window (20 cycles). */
  static readonly DEFAULT_EVICT_AFTER_TURNS: number
  /** @param evictAfterTurns idle cycles before eviction; `null` disables. Default 20. */
  constructor(evictAfterTurns?: number | null)
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  retrieve(reference: string): Promise<StoredContent>
  /** Removes all stored content. */
  clear(): void
  /** Number of entries held. */
  readonly size: number
  /** Total bytes of content held in native memory. */
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
 */
export declare class FileStorage implements OffloaderStorage {
  /** @param options the directory, or {@link FileStorageOptions}. Default `./artifacts`. */
  constructor(options?: string | FileStorageOptions)
  store(key: string, content: Uint8Array, contentType?: string): Promise<string>
  retrieve(reference: string): Promise<StoredContent>
  /** The artifact directory, as given. */
  readonly artifactDir: string
}
