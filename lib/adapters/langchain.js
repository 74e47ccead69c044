// The LangChain.js adapter (`context-offloader/langchain`): a `createAgent` middleware
// whose `wrapToolCall` replaces a large ToolMessage's content with the core's preview and
// whose `tools` add the retrieval tool. The session is the run's `thread_id`; a run
// without one uses the middleware's own session. LangChain is loaded only from here.
import { randomUUID } from 'node:crypto'
import { createMiddleware, ToolMessage } from 'langchain'
import { describe } from '../numbers.js'
import { Offloader } from '../offloader.js'
import { logger } from '../sdk.js'
import { toCoreContent } from './langchain/content.js'
import { createRetrievalTool } from './langchain/retrieval-tool.js'

/** The middleware's name in the agent's middleware list. */
export const MIDDLEWARE_NAME = 'contextOffloader'

/** The key of an offloaded ToolMessage's `metadata` that holds what was stored. */
export const METADATA_KEY = 'contextOffloader'

/**
 * The session of a run: its `thread_id` (a non-empty string, or a number as LangGraph
 * keys threads by it), else `undefined` (the middleware's own session).
 * @param {unknown} configurable - `runtime.configurable` / `config.configurable`
 * @returns {string | undefined}
 */
export function threadSession(configurable) {
  const thread = configurable !== null && typeof configurable === 'object' ? configurable.thread_id : undefined
  if (typeof thread === 'string') return thread.length > 0 ? thread : undefined
  if (typeof thread === 'number' && Number.isFinite(thread)) return String(thread)
  return undefined
}

/** The core's `Offloader` for the middleware's options, its errors naming the middleware. */
function offloaderFor(options) {
  try {
    return new Offloader(options)
  } catch (err) {
    const Kind = err instanceof RangeError ? RangeError : err instanceof TypeError ? TypeError : Error
    throw new Kind(`contextOffloaderMiddleware: ${err?.message ?? err}`, { cause: err })
  }
}

/**
 * A middleware for LangChain's `createAgent` that keeps large tool results out of the
 * context window. Its `wrapToolCall` hands every ToolMessage to the core: one larger
 * than `maxResultTokens` is stored and its content replaced with a preview and
 * references (what was stored is in `metadata.contextOffloader`); smaller ones, error
 * results (unless `offloadErrors`) and `Command`s pass through as they are. Its `tools`
 * add `retrieve_offloaded_content` (unless `includeRetrievalTool: false`), which reads
 * the same session. The session is the run's `configurable.thread_id`; runs without one
 * share this middleware's own session, kept in memory.
 *
 * It never catches a tool's error: put it before `toolErrorMiddleware` in `middleware`
 * (see the README). A failure to offload keeps the original result and warns.
 * @param {import('../../langchain.d.ts').ContextOffloaderMiddlewareOptions} [options]
 */
export function contextOffloaderMiddleware(options = {}) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`contextOffloaderMiddleware options must be an object such as { storage, maxResultTokens }, got ${describe(options)}`)
  }
  const offloader = offloaderFor(options)
  const tools = options.includeRetrievalTool === false ? [] : [createRetrievalTool(offloader.retrievalTool, threadSession)]

  /** The ToolMessage that goes on: `message`, or a copy with the preview as its content. */
  async function replaceLarge(message, request) {
    const toolCall = request?.toolCall ?? {}
    const toolCallId = message.tool_call_id || toolCall.id || `lc_${randomUUID()}`
    try {
      const core = toCoreContent(message.content)
      if (!core) return message
      const offloaded = await offloader.offloadResult({
        toolName: toolCall.name || message.name || 'tool',
        toolCallId,
        content: core.content,
        sessionId: threadSession(request?.runtime?.configurable),
        isError: message.status === 'error',
        input: toolCall.args,
      })
      if (!offloaded) return message
      const { references, tokens, approximate, truncated } = offloaded
      return new ToolMessage({
        content: core.toMessageContent(offloaded.parts),
        tool_call_id: message.tool_call_id,
        name: message.name,
        id: message.id,
        status: message.status,
        artifact: message.artifact,
        additional_kwargs: message.additional_kwargs,
        response_metadata: message.response_metadata,
        metadata: { ...message.metadata, [METADATA_KEY]: { references, tokens, approximate, truncated } },
      })
    } catch (err) {
      // Content the core cannot read never breaks the tool call.
      logger.warn(`tool_call_id=<${toolCallId}> | the result could not be offloaded; it is kept as it is`, err)
      return message
    }
  }

  const middleware = createMiddleware({
    name: MIDDLEWARE_NAME,
    tools,
    wrapToolCall: async (request, handler) => {
      // A tool's error goes up unchanged: the agent's error handling stays LangChain's.
      const result = await handler(request)
      return ToolMessage.isInstance(result) ? replaceLarge(result, request) : result
    },
  })
  Object.defineProperty(middleware, 'offloader', { value: offloader, enumerable: false })
  return middleware
}
