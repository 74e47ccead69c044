// Typings of `context-offloader/langchain`: the LangChain.js adapter, a middleware for
// `createAgent` (langchain 1.x). What it shares with the core is declared in `./core.js`.
import type { AgentMiddleware } from 'langchain'
import type { Offloader, OffloaderOptions, OffloadReference } from './core.js'

export type { Offloader, OffloaderOptions, OffloadReference } from './core.js'

/**
 * Options of {@link contextOffloaderMiddleware}: the core's {@link OffloaderOptions}, with
 * their names and defaults (`storage`, `maxResultTokens`, `previewTokens`, `tokenizer`,
 * `preview`, `headShare`, `references`, `retrieval`, `ttlSeconds`, `neverOffload`,
 * `shouldOffload`, `onStorageError`, `offloadErrors`, `includeRetrievalTool`). With
 * `includeRetrievalTool: false` the middleware adds no retrieval tool and the preview
 * does not name it.
 */
export type ContextOffloaderMiddlewareOptions = OffloaderOptions

/** What an offloaded ToolMessage's `metadata.contextOffloader` holds. */
export interface OffloadedToolMessageMetadata {
  /** The stored blocks, as the model sees their references. */
  references: OffloadReference[]
  /** The result's tokens, as the preview's header shows them. */
  tokens: number
  /** Whether `tokens` is an estimate. */
  approximate: boolean
  /** Whether storing failed and only the preview was kept (`onStorageError: 'truncate'`). */
  truncated: boolean
}

/** The middleware {@link contextOffloaderMiddleware} returns: a LangChain middleware, and its offloader. */
export type ContextOffloaderMiddleware = AgentMiddleware<undefined, undefined, unknown> & {
  /** The offloader behind the middleware: `stats()`, `storage`, and its `retrievalTool` in the core's form. */
  readonly offloader: Offloader
}

/**
 * A `createAgent` middleware that keeps large tool results out of the context window.
 * Its `wrapToolCall` replaces the content of a ToolMessage larger than `maxResultTokens`
 * with a preview and references (what was stored is in the message's
 * `metadata.contextOffloader`, see {@link OffloadedToolMessageMetadata}); small results,
 * error results (unless `offloadErrors`) and `Command`s pass through unchanged. Its
 * `tools` add `retrieve_offloaded_content`, which reads the same session. The session is
 * the run's `configurable.thread_id`; runs without one share this middleware's own
 * session, kept in memory.
 *
 * It never catches a tool's error. Put it before `toolErrorMiddleware` in `middleware`
 * to keep tool errors recoverable and let `offloadErrors` see them.
 *
 * @throws {TypeError | RangeError | Error} for bad options, naming the option.
 */
export declare function contextOffloaderMiddleware(options?: ContextOffloaderMiddlewareOptions): ContextOffloaderMiddleware

/** The middleware's name (`'contextOffloader'`). */
export declare const MIDDLEWARE_NAME: 'contextOffloader'

/** The key of an offloaded ToolMessage's `metadata` that holds {@link OffloadedToolMessageMetadata} (`'contextOffloader'`). */
export declare const METADATA_KEY: 'contextOffloader'
