// The OpenAI Agents SDK adapter (`context-offloader/openai-agents`): `offloadTools(tools,
// options)` gives back an agent's tools with each function tool's large results offloaded
// (the model sees the preview and references), plus the `retrieve_offloaded_content`
// function tool. Built on the core's `Offloader`; `@openai/agents` is imported only here.
import { randomUUID } from 'node:crypto'
import * as agents from '@openai/agents'
import { Offloader } from '../offloader.js'
import { checkSessionId } from '../manifest-keys.js'
import { describe } from '../numbers.js'
import { CORE_OPTION_NAMES } from '../options.js'
import { warnUnknownOptions } from '../option-names.js'
import { RETRIEVAL_TOOL_NAME } from '../retrieval-schema.js'
import { logger } from '../sdk.js'
import { fromCoreResult, toCoreContent } from './openai-agents/outputs.js'

/**
 * What a function tool answers when it throws and has no `errorFunction` of its own (the
 * SDK's `defaultToolErrorFunction`): an error, never offloaded.
 */
export const DEFAULT_TOOL_ERROR_TEXT = 'An error occurred while running the tool. Please try again.'

/** The adapter's own options, besides the core's. */
const ADAPTER_OPTION_NAMES = ['sessionId', 'offloader']

/**
 * The SDK's `invokeFunctionTool` (runs a function tool under its own `timeoutMs`, as the
 * runner does), where the SDK exports it.
 */
const invokeUnderItsTimeout = typeof agents.invokeFunctionTool === 'function' ? agents.invokeFunctionTool : undefined

/**
 * A copy of `tool` (same prototype, every own property with its descriptor, symbol-keyed
 * ones included) with `overrides` in place of its own.
 */
function withOverrides(tool, overrides) {
  const descriptors = Object.getOwnPropertyDescriptors(tool)
  for (const [name, value] of Object.entries(overrides)) {
    descriptors[name] = { value, writable: true, enumerable: true, configurable: true }
  }
  return Object.create(Object.getPrototypeOf(tool), descriptors)
}

/** Outputs kept for a tool's output hooks, at most (the oldest are forgotten first). */
const MAX_PENDING_OUTPUTS = 64

/** Whether `seen` is `replacement`, or a copy of it (the SDK hands custom data extractors a clone). */
function sameOutput(replacement, seen) {
  if (replacement === seen) return true
  if (replacement === null || typeof replacement !== 'object' || seen === null || typeof seen !== 'object') return false
  try {
    return JSON.stringify(replacement) === JSON.stringify(seen)
  } catch {
    return false
  }
}

/**
 * A tool's output hooks (`outputGuardrails`, `customDataExtractor`), made to read the
 * tool's own output. The SDK hands them what `invoke` answered: for an offloaded result,
 * the preview. A guardrail would then let everything the preview leaves out pass
 * unchecked (to reach the model through the retrieval tool), and custom data would be
 * made from the preview. `undefined` when the tool has no such hooks.
 *
 * `hold(callId, replacement, own)` keeps the tool's own output until the last hook has
 * read it: the last guardrail (or one that rejected it or threw, as the SDK stops
 * there), else the extractor, which the SDK runs after the guardrails.
 * @param {any} tool
 */
function outputHooksOnOwnOutput(tool) {
  const guardrails = Array.isArray(tool.outputGuardrails) && tool.outputGuardrails.length > 0 ? tool.outputGuardrails : undefined
  const extractor = typeof tool.customDataExtractor === 'function' ? tool.customDataExtractor : undefined
  if (!guardrails && !extractor) return undefined
  /** @type {Array<{ callId: string, replacement: unknown, own: unknown }>} */
  const pending = []
  const hold = (callId, replacement, own) => {
    if (pending.length >= MAX_PENDING_OUTPUTS) pending.shift()
    pending.push({ callId, replacement, own })
  }
  /** The held output `output` replaced in call `toolCall`, if any. */
  const find = (toolCall, output) => pending.find((e) => e.callId === toolCall?.callId && sameOutput(e.replacement, output))
  const release = (entry) => {
    const at = pending.indexOf(entry)
    if (at >= 0) pending.splice(at, 1)
  }
  const last = guardrails ? guardrails.length - 1 : -1
  const overrides = {}
  if (guardrails) {
    overrides.outputGuardrails = guardrails.map((guardrail, i) => ({
      ...guardrail,
      run: async (args) => {
        const held = find(args?.toolCall, args?.output)
        let done = i === last && !extractor
        try {
          const checked = await guardrail.run(held ? { ...args, output: held.own } : args)
          const behavior = checked?.behavior?.type
          if (behavior !== undefined && behavior !== 'allow') done = true
          return checked
        } catch (err) {
          done = true
          throw err
        } finally {
          if (held && done) release(held)
        }
      },
    }))
  }
  if (extractor) {
    overrides.customDataExtractor = (args) => {
      const held = find(args?.toolCall, args?.output)
      if (held) release(held)
      return extractor(held ? { ...args, output: held.own } : args)
    }
  }
  return { hold, overrides }
}

/**
 * Whether a function tool is left as it is:
 * - an agent turned into a tool (`agent.asTool()`, which has `on`): the SDK links it to
 *   its agent by identity (nested runs, approvals, run state), which a copy would lose;
 * - a tool with an `outputSchema`: its output is a typed JSON value, not text to preview.
 */
function isLeftAsItIs(tool) {
  return typeof tool.on === 'function' || tool.outputSchema !== undefined
}

/** Checks `options.sessionId` and returns the function that gives a run's session (`undefined`: the offloader's own). */
function sessionResolver(sessionId) {
  if (sessionId === undefined || sessionId === null) return () => undefined
  if (typeof sessionId === 'string') {
    checkSessionId(sessionId, 'offloadTools() option sessionId')
    return () => sessionId
  }
  if (typeof sessionId !== 'function') {
    throw new TypeError(
      `offloadTools() option sessionId must be a string or a function (runContext) => string, got ${describe(sessionId)}`,
    )
  }
  return (runContext) => {
    const id = sessionId(runContext)
    if (id === undefined || id === null) return undefined
    if (typeof id !== 'string') {
      throw new TypeError(`offloadTools() option sessionId(runContext) must return a string (or undefined), got ${describe(id)}`)
    }
    return checkSessionId(id, 'offloadTools() option sessionId(runContext)')
  }
}

/** The offloader to use: `options.offloader`, or a new one with the core's options. */
function offloaderOf(options) {
  const coreOptions = {}
  for (const name of CORE_OPTION_NAMES) if (options[name] !== undefined) coreOptions[name] = options[name]
  if (options.offloader === undefined || options.offloader === null) return new Offloader(coreOptions)
  if (!(options.offloader instanceof Offloader)) {
    throw new TypeError(`offloadTools() option offloader must be an Offloader from 'context-offloader/core', got ${describe(options.offloader)}`)
  }
  const given = Object.keys(coreOptions)
  if (given.length > 0) {
    throw new TypeError(
      `offloadTools() options ${given.join(', ')} cannot be given with offloader: pass them to new Offloader() instead`,
    )
  }
  return options.offloader
}

/** The tool call's arguments as the tool reads them (for `shouldOffload`), or the raw text when they are not JSON. */
function parsedInput(input) {
  if (typeof input !== 'string') return input
  try {
    return JSON.parse(input)
  } catch {
    return input
  }
}

/**
 * `tool` with large results offloaded: its `invoke` runs the tool's own, then hands the
 * output to the offloader and answers with the preview when the offloader offloads it.
 * The SDK's default error text and its timeout text are answered as they are; anything
 * that goes wrong while offloading (a bad session id, content the core refuses) keeps
 * the tool's own output, with a warning.
 */
function wrapFunctionTool(tool, offloader, sessionOf) {
  const invokeTool = tool.invoke
  const timeoutText = tool.timeoutMs === undefined ? undefined : `Tool '${tool.name}' timed out after ${tool.timeoutMs}ms.`
  // The tool's timeout bounds the tool's own run, not the time its result takes to be
  // stored: the copy runs the tool under it, and has none for the runner to enforce.
  const ownTimeout = tool.timeoutMs !== undefined && invokeUnderItsTimeout !== undefined
  const hooks = outputHooksOnOwnOutput(tool)
  const invoke = async (runContext, input, details) => {
    const output = ownTimeout
      ? await invokeUnderItsTimeout({ tool, runContext, input, details })
      : await Reflect.apply(invokeTool, tool, [runContext, input, details])
    if (output === DEFAULT_TOOL_ERROR_TEXT || output === timeoutText) return output
    const shape = toCoreContent(output)
    if (shape.kind === 'none') return output
    const callId = details?.toolCall?.callId
    const toolCallId = callId || `call_${randomUUID()}`
    try {
      const offloaded = await offloader.offloadResult({
        toolName: tool.name,
        toolCallId,
        content: shape.content,
        sessionId: sessionOf(runContext),
        input: parsedInput(input),
      })
      if (!offloaded) return output
      const replacement = fromCoreResult(shape, offloaded)
      if (hooks && callId) hooks.hold(callId, replacement, output)
      return replacement
    } catch (err) {
      logger.warn(`tool=<${tool.name}>, tool_call_id=<${toolCallId}> | the result could not be offloaded, keeping it as it is`, err)
      return output
    }
  }
  return withOverrides(tool, {
    invoke,
    ...(ownTimeout ? { timeoutMs: undefined } : {}),
    ...hooks?.overrides,
  })
}

/**
 * The `retrieve_offloaded_content` function tool over `offloader`, in the SDK's strict
 * schema mode: every field is sent (the optional ones as `null`, which the SDK strips
 * before `execute`, and the core reads as absent). It reads the session the wrapped
 * tools store in.
 */
function retrievalFunctionTool(offloader, sessionOf) {
  const retrieval = offloader.retrievalTool
  return agents.tool({
    name: retrieval.name,
    description: retrieval.description,
    parameters: /** @type {any} */ (retrieval.inputSchema),
    strict: true,
    execute: async (input, runContext) => {
      let sessionId
      try {
        sessionId = sessionOf(runContext)
      } catch (err) {
        return `Error: ${err?.message ?? err}`
      }
      return retrieval.execute(/** @type {any} */ (input), { sessionId })
    },
  })
}

/**
 * Large tool results kept out of an OpenAI Agents SDK agent's context: returns `tools`
 * with every function tool wrapped (in the same order, same names, schemas, approvals
 * and guardrails) and the `retrieve_offloaded_content` function tool last (unless
 * `includeRetrievalTool: false`). A result over
 * `maxResultTokens` is stored and the model gets the preview and references instead;
 * the retrieval tool lets it grep, slice, page and query what was stored.
 *
 * Left as they are: hosted and other non-function tools, agents turned into tools
 * (`agent.asTool()`), tools with an `outputSchema`.
 *
 * @param {readonly any[]} tools - the agent's tools
 * @param {import('../../openai-agents.d.ts').OffloadToolsOptions<any>} [options] - the
 *   core's options (`storage`, `maxResultTokens`, ...), or an `offloader` to share, and
 *   `sessionId`: a string, or `(runContext) => string` reading the run's context
 * @returns {any[]}
 */
export function offloadTools(tools, options = {}) {
  if (!Array.isArray(tools)) {
    throw new TypeError(`offloadTools() takes an array of tools, got ${describe(tools)}`)
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`offloadTools() options must be an object such as { sessionId, maxResultTokens }, got ${describe(options)}`)
  }
  warnUnknownOptions('offloadTools()', options, [...CORE_OPTION_NAMES, ...ADAPTER_OPTION_NAMES])
  tools.forEach((tool, i) => {
    if (tool === null || typeof tool !== 'object' || typeof tool.type !== 'string') {
      throw new TypeError(`offloadTools() tools[${i}] must be a tool of @openai/agents (an object with a type), got ${describe(tool)}`)
    }
    if (tool.type === 'function' && typeof tool.invoke !== 'function') {
      throw new TypeError(`offloadTools() tools[${i}] ('${tool.name}') is a function tool without an invoke function`)
    }
    if (tool.name === RETRIEVAL_TOOL_NAME) {
      throw new TypeError(`offloadTools() tools[${i}] is already named '${RETRIEVAL_TOOL_NAME}': offloadTools() adds that tool itself`)
    }
  })
  const sessionOf = sessionResolver(options.sessionId)
  const offloader = offloaderOf(options)
  const wrapped = tools.map((tool) =>
    tool.type === 'function' && !isLeftAsItIs(tool) ? wrapFunctionTool(tool, offloader, sessionOf) : tool,
  )
  return options.includeRetrievalTool === false ? wrapped : [...wrapped, retrievalFunctionTool(offloader, sessionOf)]
}
