// The Vercel AI SDK adapter (`context-offloader/ai`, `ai` 6 and 7): `offloadTools(tools,
// options)` wraps a tool set so that large results reach the model as a preview through
// each tool's `toModelOutput` (the SDK's steps and UI messages keep the raw output), and
// adds `retrieve_offloaded_content` as an AI SDK tool. Everything else is the core's
// `Offloader` (../offloader.js).
import { jsonSchema } from 'ai'
import { checkSessionId } from '../manifest-keys.js'
import { describe } from '../numbers.js'
import { Offloader } from '../offloader.js'
import { RETRIEVAL_TOOL_NAME } from '../retrieval-schema.js'
import { logger } from '../sdk.js'
import { callMemoryOf } from './ai/call-memory.js'
import { copyOutput, defaultModelOutput, offloadableContent, replacementOutput } from './ai/model-output.js'

/** Who validates the options (in error messages). */
const WHO = 'offloadTools'

/** Tool types whose results the adapter offloads: the app's own (provider tools are left to their provider). */
const OWN_TOOL_TYPES = new Set([undefined, 'function', 'dynamic'])

/**
 * The session resolver of `options.sessionId`: `undefined` for none (the offloader's own
 * session), a string, or a function of the tool call's execute options.
 * @param {unknown} sessionId
 * @returns {{ fixed: string | undefined, asks: boolean, of: (executeOptions: unknown) => string | undefined }}
 *   (`asks`: the session comes from each call, so a call's output is offloaded in the
 *   session its `execute` was given)
 */
function sessionResolver(sessionId) {
  if (sessionId === undefined || sessionId === null) return { fixed: undefined, asks: false, of: () => undefined }
  if (typeof sessionId === 'string') {
    const fixed = checkSessionId(sessionId, `${WHO} options.sessionId`)
    return { fixed, asks: false, of: () => fixed }
  }
  if (typeof sessionId !== 'function') {
    throw new TypeError(`${WHO} options.sessionId must be a string or a function of the tool call's options ((options) => string), got ${describe(sessionId)}`)
  }
  return {
    fixed: undefined,
    asks: true,
    of(executeOptions) {
      const session = sessionId(executeOptions)
      if (session === undefined || session === null) return undefined
      if (typeof session !== 'string' || session.length === 0 || !session.isWellFormed()) {
        throw new TypeError(`${WHO} options.sessionId returned ${describe(session)}: it must return a non-empty, well-formed string (or undefined for no session)`)
      }
      return session
    },
  }
}

/**
 * The offloader of `options`: `options.offloader` (shared by several tool sets), or a
 * new one with the rest of the options.
 */
function offloaderOf(given, coreOptions) {
  if (given === undefined || given === null) return new Offloader(coreOptions)
  if (!(given instanceof Offloader)) {
    throw new TypeError(`${WHO} options.offloader must be an Offloader (from 'context-offloader/core'), got ${describe(given)}`)
  }
  const others = Object.keys(coreOptions).filter((key) => coreOptions[key] !== undefined && coreOptions[key] !== null)
  if (others.length > 0) {
    const names = others.map((k) => `"${k}"`).join(', ')
    throw new TypeError(`${WHO} options: ${names} cannot be given with options.offloader (the offloader was made with its own options)`)
  }
  return given
}

/** Checks the tool set: an object of tools, none of them named as the retrieval tool. */
function checkTools(tools) {
  if (tools === null || typeof tools !== 'object' || Array.isArray(tools)) {
    throw new TypeError(`${WHO} tools must be an object of AI SDK tools ({ name: tool({ inputSchema, execute }) }), got ${describe(tools)}`)
  }
  for (const [name, tool] of Object.entries(tools)) {
    if (tool === null || typeof tool !== 'object') throw new TypeError(`${WHO} tools.${name} must be an AI SDK tool (an object), got ${describe(tool)}`)
    if (name === RETRIEVAL_TOOL_NAME) {
      throw new TypeError(
        `${WHO} tools already has a tool named ${RETRIEVAL_TOOL_NAME}: give each tool to offloadTools once (tool sets that share a store share options.offloader)`,
      )
    }
  }
}

/** Sets an own, enumerable data property (never a setter, nor the prototype through `__proto__`). */
function define(target, key, value) {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/**
 * A copy of a tool: its own enumerable properties, as a spread copies them, on the tool's
 * own prototype, so that what it inherits (a class's getters and methods, a prototype's
 * `needsApproval` or `description`) stays the tool's.
 */
function copyTool(tool) {
  const copy = Object.create(Object.getPrototypeOf(tool))
  for (const key of Reflect.ownKeys(tool)) {
    if (Object.prototype.propertyIsEnumerable.call(tool, key)) define(copy, key, tool[key])
  }
  return copy
}

/**
 * One tool, wrapped: its `execute` records the session of the call (and returns what the
 * tool returns, untouched: a value, a promise or an async iterable), and its
 * `toModelOutput` offloads what the model would see (the tool's own `toModelOutput`
 * first, else the SDK's text or JSON) when it is too large.
 */
function wrapTool(toolName, tool, offloader, session) {
  if (!OWN_TOOL_TYPES.has(tool.type)) return tool
  const memory = callMemoryOf(offloader)
  const wrapped = copyTool(tool)
  const { execute, toModelOutput } = tool
  if (typeof execute === 'function') {
    define(wrapped, 'execute', function offloadingExecute(input, executeOptions) {
      const id = executeOptions?.toolCallId
      const sessionId = session.of(executeOptions)
      const call = typeof id === 'string' ? memory.executed(id, sessionId) : undefined
      let result
      try {
        result = execute.call(tool, input, executeOptions)
      } catch (err) {
        if (call) memory.failed(id, call)
        throw err
      }
      // A failed call never reaches toModelOutput: its session need not be kept for it.
      if (call && result instanceof Promise) result.then(undefined, () => memory.failed(id, call))
      return result
    })
  }

  async function offloadedOutput(call, sessionId) {
    const modelOutput = typeof toModelOutput === 'function' ? await toModelOutput.call(tool, call) : defaultModelOutput(call.output)
    const content = offloadableContent(modelOutput)
    if (content === undefined) return { output: modelOutput, replaced: false }
    let result
    try {
      result = await offloader.offloadResult({
        toolName,
        toolCallId: call.toolCallId,
        content: content.content,
        sessionId,
        input: call.input,
        reuse: true,
      })
    } catch (err) {
      logger.warn(`tool=<${toolName}>, tool_call_id=<${call.toolCallId}> | the result could not be offloaded: it is kept as it is`, err)
      return { output: modelOutput, replaced: false }
    }
    return result ? { output: replacementOutput(modelOutput, result, content), replaced: true } : { output: modelOutput, replaced: false }
  }

  define(wrapped, 'toModelOutput', async function offloadingToModelOutput(call) {
    const { toolCallId, output } = call
    // A session given as a string is the tool set's; a function's answer is the call's,
    // remembered when it ran (a call not run here goes to a session nobody reads, not to
    // the offloader's own, which any call without a session reads); without a
    // sessionId, the offloader's own.
    const sessionId = session.fixed ?? (session.asks ? (memory.ran(toolCallId) ?? { session: memory.unknownCallSession }).session : undefined)
    let made = memory.recall(toolCallId, sessionId, output)
    if (!made) {
      made = offloadedOutput(call, sessionId)
      if (typeof toolCallId === 'string') memory.keep(toolCallId, sessionId, output, made)
    }
    return copyOutput((await made).output)
  })
  return wrapped
}

/** The core's retrieval tool as an AI SDK tool: its JSON Schema through `jsonSchema()`, the call's session forwarded. */
function retrievalToolOf(offloader, session) {
  const retrieval = offloader.retrievalTool
  return {
    description: retrieval.description,
    inputSchema: jsonSchema(retrieval.inputSchema),
    execute: async (input, executeOptions) => retrieval.execute(input, { sessionId: session.of(executeOptions) }),
  }
}

/**
 * Wraps an AI SDK tool set so that large tool results reach the model as a preview with
 * references, and adds the `retrieve_offloaded_content` tool that reads them back.
 *
 * Each tool's output is offloaded in its `toModelOutput` (after the tool's own, if any):
 * `steps`, `onStepFinish` and UI messages keep the raw output, and the same conversation
 * re-sent (`convertToModelMessages(uiMessages, { tools })`) shows the same preview
 * without storing the content again. Errors never reach `toModelOutput`: they go to the
 * model as they are, whatever `offloadErrors` says. Provider tools are left as they are.
 *
 * @param {Record<string, object>} tools - the tool set (`{ name: tool({ ... }) }`)
 * @param {object} [options] - the core's `OffloaderOptions`, plus `sessionId` (a string,
 *   or a function of the tool call's execute options: ai 7's `options.context`, ai 6's
 *   `options.experimental_context`), or `offloader`: an `Offloader` to share (then no
 *   other offloader options)
 * @returns {Record<string, object>} the wrapped tools and `retrieve_offloaded_content`
 *   (left out with `includeRetrievalTool: false`)
 */
export function offloadTools(tools, options = {}) {
  if (options === null || options === undefined) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${WHO} options must be an object such as { sessionId, maxResultTokens }, got ${describe(options)}`)
  }
  checkTools(tools)
  const { offloader: given, sessionId, ...coreOptions } = options
  const session = sessionResolver(sessionId)
  const offloader = offloaderOf(given, coreOptions)
  const wrapped = {}
  // Defined, not assigned: a tool named `__proto__` is a tool like any other.
  for (const [name, tool] of Object.entries(tools)) define(wrapped, name, wrapTool(name, tool, offloader, session))
  if (coreOptions.includeRetrievalTool !== false) define(wrapped, RETRIEVAL_TOOL_NAME, retrievalToolOf(offloader, session))
  return wrapped
}
