// The `retrieve_offloaded_content` tool as a LangChain tool: the core's name, description
// and JSON Schema, answered by the core's `execute` in the session of the run's thread.
import { DynamicStructuredTool } from 'langchain'

/**
 * A tool call's arguments with every `null` field left out (`line_range` too when both
 * its ends are `null`): strict-schema models send `null` for an optional field they do
 * not use, which LangChain would otherwise refuse against the schema.
 * @param {unknown} args
 */
function withoutNulls(args) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args
  const kept = {}
  for (const [name, value] of Object.entries(args)) {
    if (value === null) continue
    if (name === 'line_range' && typeof value === 'object' && !Array.isArray(value) && value.start == null && value.end == null) continue
    kept[name] = value
  }
  return kept
}

/** A LangChain tool whose arguments are read as the core reads them (`null` means absent) before LangChain checks them. */
class NullTolerantTool extends DynamicStructuredTool {
  /**
   * @param {unknown} input - a tool call (`{ args, type: 'tool_call', ... }`) or its arguments
   * @param {unknown} [config]
   */
  invoke(input, config) {
    const isCall = input !== null && typeof input === 'object' && input.type === 'tool_call'
    return super.invoke(isCall ? { ...input, args: withoutNulls(input.args) } : withoutNulls(input), config)
  }
}

/**
 * The retrieval tool for LangChain agents.
 * @param {import('../../../core.d.ts').RetrievalTool} retrievalTool - the core's tool
 * @param {(configurable: unknown) => string | undefined} sessionOf - the session of a run's `configurable`
 */
export function createRetrievalTool(retrievalTool, sessionOf) {
  return new NullTolerantTool({
    name: retrievalTool.name,
    description: retrievalTool.description,
    schema: retrievalTool.inputSchema,
    // A wrong argument's error names the field, so the model can correct its call.
    verboseParsingErrors: true,
    func: (input, _runManager, config) => retrievalTool.execute(input, { sessionId: sessionOf(config?.configurable) }),
  })
}
