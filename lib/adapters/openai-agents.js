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

/** Replacements kept for the output guardrails, at most (the oldest are forgotten first). */
const MAX_PENDING_GUARDRAIL_CHECKS = 64

/**
 * A tool's output guardrails, made to check the tool's own output. The SDK runs them on
 * what `invoke` answered: for an offloaded result, the preview. Everything the preview
 * leaves out would then pass them unchecked and reach the model through the retrieval
 * tool. `ownOutputs` maps each replacement to the output it replaced, until the last
 * guardrail has run on it (or one rejected it or threw: the SDK stops there).
 * @param {readonly any[]} guardrails
 * @param {Map<unknown, unknown>} ownOutputs
 */
function guardrailsOnOwnOutput(guardrails, ownOutputs) {
  const last = guardrails.length - 1
  return guardrails.map((guardrail, i) => ({
    ...guardrail,
    run: async (args) => {
      const replacement = args?.output
      const held = ownOutputs.has(replacement)
      let done = i === last
      try {
        const checked = await guardrail.run(held ? { ...args, output: ownOutputs.get(replacement) } : args)
        const behavior = checked?.behavior?.type
        if (behavior !== undefined && behavior !== 'allow') done = true
        return checked
      } catch (err) {
        done = true
        throw err
      } finally {
        if (held && done) ownOutputs.delete(replacement)
      }
    },
  }))
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
  const guardrails = Array.isArray(tool.outputGuardrails) && tool.outputGuardrails.length > 0 ? tool.outputGuardrails : undefined
  /** Each replacement the output guardrails have yet to check, and the output it replaced. */
  const ownOutputs = new Map()
  const invoke = async (runContext, input, details) => {
    const output = ownTimeout
      ? await invokeUnderItsTimeout({ tool, runContext, input, details })
      : await Reflect.apply(invokeTool, tool, [runContext, input, details])
    if (output === DEFAULT_TOOL_ERROR_TEXT || output === timeoutText) return output
    const shape = toCoreContent(output)
    if (shape.kind === 'none') return output
    const toolCallId = details?.toolCall?.callId || `call_${randomUUID()}`
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
      if (guardrails) {
        if (ownOutputs.size >= MAX_PENDING_GUARDRAIL_CHECKS) ownOutputs.delete(ownOutputs.keys().next().value)
        ownOutputs.set(replacement, output)
      }
      return replacement
    } catch (err) {
      logger.warn(`tool=<${tool.name}>, tool_call_id=<${toolCallId}> | the result could not be offloaded, keeping it as it is`, err)
      return output
    }
  }
  return withOverrides(tool, {
    invoke,
    ...(ownTimeout ? { timeoutMs: undefined } : {}),
    ...(guardrails ? { outputGuardrails: guardrailsOnOwnOutput(guardrails, ownOutputs) } : {}),
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
