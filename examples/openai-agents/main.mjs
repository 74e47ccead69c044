// An OpenAI Agents SDK agent, driven offline by the SDK's own ScriptedModel, calls a tool
// that returns a 40,000-line service log. offloadTools() stores the log, the model gets a
// short preview with a reference instead, and greps the stored log with the
// retrieve_offloaded_content tool. Run from the repository root:
//   node examples/openai-agents/main.mjs
import { Agent, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing'
import { offloadTools } from 'context-offloader/openai-agents'

setTracingDisabled(true) // offline: no traces to export

const log = Array.from({ length: 40_000 }, (_, i) =>
  i % 9973 === 0 && i > 0
    ? `10:${String(i % 60).padStart(2, '0')} ERROR payments: upstream timeout (order=${i})`
    : `10:${String(i % 60).padStart(2, '0')} INFO  GET /api/orders/${i} 200`,
).join('\n')

const fetchLogs = tool({
  name: 'fetch_logs',
  description: 'Returns the service log of the last hour.',
  parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
  execute: async () => log,
})

/** The tool result the model was given for `callId`. */
const resultFor = (call, callId) =>
  call.request.input.find((item) => item.type === 'function_call_result' && item.callId === callId).output.text

// The "model": call the tool, then grep the reference its preview names, then answer.
const model = new ScriptedModel([
  [functionCall('fetch_logs', {}, { callId: 'call_1' })],
  modelResponder((call) => {
    const reference = /^ {2}(\S+) \(/m.exec(resultFor(call, 'call_1'))[1]
    const args = { reference, pattern: 'ERROR', line_range: null, context_lines: 0 }
    return [functionCall('retrieve_offloaded_content', args, { callId: 'call_2' })]
  }),
  [assistantMessage('There were 4 payment timeouts.')],
])

const agent = new Agent({
  name: 'ops',
  instructions: 'Answer questions about the service.',
  model,
  // The session scopes references: here it comes from the app's own run context.
  tools: offloadTools([fetchLogs], {
    sessionId: (runContext) => runContext.context.userId,
    references: 'opaque',
    previewTokens: 150,
  }),
})

const result = await run(agent, 'Any errors in the last hour?', { context: { userId: 'user-42' } })

const preview = resultFor(model.calls[1], 'call_1')
console.log(`The tool returned ${log.length.toLocaleString('en-US')} characters; the model saw ${preview.length.toLocaleString('en-US')}:\n`)
console.log(preview)
console.log('\nThe model grepped the stored log and got back:\n')
console.log(resultFor(model.calls[2], 'call_2'))
console.log(`\nFinal answer: ${result.finalOutput}`)
