/**
 * A minimal stand-in for an SDK agent, enough to drive a ContextOffloader the way
 * the agent loop does: hooks registered with `addHook`, real `AfterToolCallEvent`s,
 * the SDK's real default token heuristic (`Model.countTokens`), the SDK's default
 * Node sandbox, and tool calls through `tool.stream(toolContext)` as the tool
 * executor makes them.
 */
import { AfterToolCallEvent, Model, TextBlock, ToolResultBlock } from '@strands-agents/sdk'

/** A model whose only used feature is the base class's `countTokens` heuristic. */
class HeuristicModel extends Model {
  #config = { modelId: 'bench-heuristic' }
  updateConfig(config) {
    this.#config = { ...this.#config, ...config }
  }
  getConfig() {
    return this.#config
  }
  // eslint-disable-next-line require-yield
  async *stream() {
    throw new Error('the benchmark model does not generate')
  }
}

const model = new HeuristicModel()

/**
 * The SDK's default Node sandbox (registered when the SDK's Node entry point
 * loads; an `Agent` without a `sandbox` uses it). It is not exported, so it is
 * read from the SDK's internal default slot.
 */
const { defaultSandbox } = await import(new URL('./sandbox/default.js', import.meta.resolve('@strands-agents/sdk')).href)
const sandbox = defaultSandbox.get()

/** A fake agent: collects hook callbacks and dispatches events to them. */
export function createAgent() {
  const hooks = new Map()
  return {
    model,
    sandbox,
    metrics: { cycleCount: 0 },
    addHook(EventClass, callback) {
      if (!hooks.has(EventClass)) hooks.set(EventClass, [])
      hooks.get(EventClass).push(callback)
      return () => hooks.set(EventClass, hooks.get(EventClass).filter((cb) => cb !== callback))
    },
    /** Runs the callbacks for `event` in the registry's order and returns the event. */
    async dispatch(event) {
      const callbacks = [...(hooks.get(event.constructor) ?? [])]
      if (event._shouldReverseCallbacks?.()) callbacks.reverse()
      for (const callback of callbacks) await callback(event)
      return event
    },
  }
}

/** A plugin of `impl` with `storage`, registered on a fresh fake agent. */
export function createPluginAgent(impl, storage, config = {}) {
  const agent = createAgent()
  const plugin = new impl.ContextOffloader({ storage, ...config })
  plugin.initAgent(agent)
  return { agent, plugin, storage }
}

let toolUseCounter = 0

/** A successful tool result holding one text block, as an `AfterToolCallEvent`. */
export function toolResultEvent(agent, text, toolName = 'fetch_logs') {
  const toolUseId = `tooluse_${++toolUseCounter}`
  return new AfterToolCallEvent({
    agent,
    toolUse: { name: toolName, toolUseId, input: {} },
    tool: undefined,
    result: new ToolResultBlock({ toolUseId, status: 'success', content: [new TextBlock(text)] }),
    invocationState: {},
  })
}

/** Offloads `text` through the agent's hooks; returns the replaced result's text. */
export async function offload(agent, text) {
  const event = await agent.dispatch(toolResultEvent(agent, text))
  const replaced = event.result.content[0]?.text ?? ''
  if (!replaced.startsWith('[Offloaded:')) throw new Error('tool result was not offloaded')
  return replaced
}

/** The storage references listed in an offload placeholder. */
export function referencesIn(placeholder) {
  const list = placeholder.split('[Stored references:]\n')[1] ?? ''
  return list
    .split('\n')
    .map((line) => line.trim().split(' (')[0])
    .filter(Boolean)
}

/**
 * Calls a tool the way the SDK's tool executor does (`tool.stream(toolContext)`,
 * draining stream events) and returns the text of the resulting ToolResultBlock.
 */
export async function callTool(tool, input, agent) {
  const toolUse = { name: tool.name, toolUseId: `tooluse_${++toolUseCounter}`, input }
  const toolContext = {
    toolUse,
    agent,
    invocationState: {},
    interrupt: () => {
      throw new Error('interrupts are not used in the benchmark')
    },
  }
  const stream = tool.stream(toolContext)
  let step = await stream.next()
  while (!step.done) step = await stream.next()
  const result = step.value
  if (result.status !== 'success') throw new Error(`tool call failed: ${JSON.stringify(result.content)}`)
  return result.content.map((block) => block.text ?? JSON.stringify(block.json ?? null)).join('\n')
}
