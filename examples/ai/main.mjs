// The Vercel AI SDK with context-offloader, offline: a mock model (the SDK's own
// MockLanguageModelV4) calls a tool that returns a 40,000-line log. The model is shown a
// short preview with a reference, greps the stored log with retrieve_offloaded_content,
// and answers. The app's `steps` keep the raw log. Run: node examples/ai/main.mjs
import { generateText, jsonSchema, stepCountIs, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { offloadTools } from '../../ai.js'

/** A service log: INFO lines, and an ERROR timeout every 9,973 lines. */
const log = Array.from({ length: 40_000 }, (_, i) =>
  i % 9973 === 9972 ? `10:00:${i % 60} ERROR payments: upstream timeout (order=${i})` : `10:00:${i % 60} INFO  GET /api/orders/${i} 200`,
).join('\n')

const fetchLogs = tool({
  description: 'Returns the service log of the last hour.',
  inputSchema: jsonSchema({ type: 'object', properties: {} }),
  execute: async () => log,
})

// Everything the model is sent, step by step.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const prompts = []
const reply = (content) => ({ content, finishReason: { unified: content[0].type === 'tool-call' ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] })
const call = (toolCallId, toolName, input) => ({ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) })
const lastToolOutput = (prompt) => prompt.at(-1).content[0].output.value

// A scripted model: fetch the logs, grep the stored log for errors, answer.
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    prompts.push(prompt)
    if (prompts.length === 1) return reply([call('call_1', 'fetch_logs', {})])
    if (prompts.length === 2) {
      const reference = /\[Stored references:\]\n\s+(\S+)/.exec(lastToolOutput(prompt))[1]
      return reply([call('call_2', 'retrieve_offloaded_content', { reference, pattern: 'ERROR', context_lines: 0 })])
    }
    return reply([{ type: 'text', text: 'Four upstream timeouts in payments.' }])
  },
})

const tools = offloadTools({ fetch_logs: fetchLogs }, { sessionId: 'chat-42', references: 'opaque', previewTokens: 100 })
const result = await generateText({ model, tools, prompt: 'Why did checkout fail?', stopWhen: stepCountIs(5) })

const size = (s) => `${s.length.toLocaleString('en-US')} chars`
console.log(`The tool returned ${size(log)}; steps[0] keeps all of it: ${result.steps[0].toolResults[0].output === log}.`)
console.log(`\n--- What the model saw for fetch_logs (${size(lastToolOutput(prompts[1]))}) ---\n${lastToolOutput(prompts[1])}`)
console.log(`\n--- What the model got back from retrieve_offloaded_content ---\n${lastToolOutput(prompts[2])}`)
console.log(`\n--- The answer ---\n${result.text}`)
console.log(`\nEvery prompt together: ${size(JSON.stringify(prompts))}.`)
