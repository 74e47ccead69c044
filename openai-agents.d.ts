// Typings of `context-offloader/openai-agents`: large tool results kept out of an OpenAI
// Agents SDK (`@openai/agents`) agent's context. The core's options and types are
// declared in `context-offloader/core`.
import type { RunContext, Tool } from '@openai/agents'
import type { Offloader, OffloaderOptions } from './core.js'

/**
 * The run's session, for opaque references: a string, or a function of the tool call's
 * `RunContext` (`runContext.context` is what the app passed as `run(agent, input, { context })`).
 * `undefined` (or no `sessionId`) is the offloader's own session, shared by every run.
 */
export type OffloadSessionId<TContext = unknown> = string | ((runContext: RunContext<TContext>) => string | null | undefined)

/**
 * Options of {@link offloadTools}: the core's {@link OffloaderOptions} (`storage`,
 * `maxResultTokens`, `previewTokens`, `references`, `retrieval`, ...) or an
 * {@link Offloader} to share, and the session.
 */
export interface OffloadToolsOptions<TContext = unknown> extends OffloaderOptions {
  /** The session opaque references are issued in and read from (see {@link OffloadSessionId}). */
  sessionId?: OffloadSessionId<TContext>
  /**
   * An offloader to use instead of a new one (to share its storage, sessions and
   * `stats()` between tool sets, e.g. tools built per request). The core's options
   * cannot be given with it: they belong to `new Offloader()`.
   */
  offloader?: Offloader
}

/** `T`, not inferred from where it is used (TypeScript's `NoInfer`, for versions before 5.4 too). */
type NotInferred<T> = [T][T extends unknown ? 0 : never]

/**
 * Returns `tools` with each function tool's large results offloaded (the model sees a
 * preview and references instead), in the same order, and the
 * `retrieve_offloaded_content` function tool last (unless `includeRetrievalTool: false`). Hosted and other non-function
 * tools, agents turned into tools (`agent.asTool()`) and tools with an `outputSchema`
 * are returned as they are. The SDK's default tool-error text is never offloaded.
 * Throws a `TypeError` or `RangeError` naming the option for bad options.
 *
 * `TContext` (the run context's type) comes from where the tools go (`new Agent<TContext>({ tools })`)
 * or from a typed `sessionId` function; failing those, from the tools themselves (a tool
 * typed `Tool<TContext>` gives back tools of that context, as the SDK's `new Agent({ tools })` infers it).
 */
export declare function offloadTools<TContext = unknown>(
  tools: readonly Tool<NotInferred<TContext>>[],
  options?: OffloadToolsOptions<TContext>,
): Tool<TContext>[]
export declare function offloadTools<TContext = unknown>(
  tools: readonly Tool<TContext>[],
  options?: OffloadToolsOptions<TContext>,
): Tool<TContext>[]

/** What the SDK answers for a function tool that threw (without an `errorFunction` of its own): never offloaded. */
export declare const DEFAULT_TOOL_ERROR_TEXT: 'An error occurred while running the tool. Please try again.'
