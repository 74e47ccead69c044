// Typings of `context-offloader/ai`: the Vercel AI SDK adapter (`ai` 6 and 7). The AI SDK
// types come from the `ai` package the app has installed.
import type { Tool, ToolSet } from 'ai'
import type { Offloader, OffloaderOptions, RetrievalInput } from './core.js'

export type {
  OffloaderOptions,
  OffloaderStorage,
  OffloaderStats,
  OffloadReference,
  PreviewMode,
  RetrievalInput,
  UnifiedStorage,
} from './core.js'

/**
 * The options the AI SDK gives a tool's `execute` (what a {@link SessionIdOption}
 * function is called with): ai 7 passes each tool its own `context` (from
 * `toolsContext[toolName]`), ai 6 passes every tool the call's `experimental_context`.
 */
export interface ToolCallOptions {
  /** The tool call's id. */
  toolCallId: string
  /** The messages sent to the model on the step that made the call. */
  messages: unknown[]
  /** Aborts the call. */
  abortSignal?: AbortSignal
  /** ai 7: the tool's context (`toolsContext[toolName]` of `generateText`/`streamText`). */
  context?: unknown
  /** ai 6: the call's `experimental_context` (the same for every tool). */
  experimental_context?: unknown
}

/**
 * The session opaque references are issued in, and stored content is tagged with: a
 * string (tools built per conversation), or a function of the tool call's
 * {@link ToolCallOptions}, called in each call's `execute` (`undefined` or `null`: no
 * session, i.e. the offloader's own). A function's answer is remembered by tool call id
 * for the output the model sees; a conversation re-sent after a restart has no `execute`
 * to ask, so pass its session as a string there.
 */
export type SessionIdOption = string | ((options: ToolCallOptions) => string | null | undefined)

/**
 * Options of {@link offloadTools}: the core's {@link OffloaderOptions} (`storage`,
 * `maxResultTokens`, `previewTokens`, `references`, `retrieval`, ...), `sessionId`, and
 * `offloader`. With `offloader`, the offloader's own options apply and none of the
 * core's options may be given. `null` for `sessionId` or `offloader` means absent.
 */
export interface OffloadToolsOptions extends OffloaderOptions {
  /** See {@link SessionIdOption}. Default: none (the offloader's own session). */
  sessionId?: SessionIdOption | null
  /**
   * An `Offloader` (from `context-offloader/core`) to use instead of a new one: tool sets
   * built on one offloader share its storage, its counters, and what it remembers of
   * their calls (so a conversation re-sent through a tool set built for the request finds
   * the sessions its calls ran in).
   */
  offloader?: Offloader | null
}

/** The `retrieve_offloaded_content` tool, as an AI SDK tool: it answers with text. */
export type RetrievalAiTool = Tool<RetrievalInput, string>

/**
 * The tool set {@link offloadTools} returns: the same tools, and `retrieve_offloaded_content`
 * (absent at run time when the options say `includeRetrievalTool: false`).
 */
export type OffloadedToolSet<TOOLS extends ToolSet> = TOOLS & { retrieve_offloaded_content: RetrievalAiTool }

/**
 * Wraps an AI SDK tool set so that large tool results reach the model as a preview with
 * references, and adds the `retrieve_offloaded_content` tool that reads them back.
 *
 * Results are offloaded in each tool's `toModelOutput` (after the tool's own, if it has
 * one): `steps`, `onStepFinish` and UI messages keep the raw output, and the same
 * conversation re-sent through `convertToModelMessages(uiMessages, { tools })` shows
 * the same preview without storing the content again. Tool errors never reach
 * `toModelOutput`: they go to the model as the SDK makes them (`offloadErrors` does not
 * apply). Provider tools are returned as they are.
 *
 * @throws TypeError or RangeError naming the option, for bad tools or options.
 */
export declare function offloadTools<TOOLS extends ToolSet>(tools: TOOLS, options?: OffloadToolsOptions): OffloadedToolSet<TOOLS>
