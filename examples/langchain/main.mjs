// LangChain.js: a real `createAgent` loop, driven offline by LangChain's fake chat model,
// calls a tool that returns a 3 MB service log. The context-offloader middleware stores
// the log, the model sees a short preview with a reference, and it greps the stored log
// with retrieve_offloaded_content instead of reading all of it.
//
// Run from the repository root: node examples/langchain/main.mjs
import { AIMessage, createAgent, fakeModel, HumanMessage, tool, toolErrorMiddleware } from 'langchain'
import { MemorySaver } from '@langchain/langgraph'
import { contextOffloaderMiddleware } from '../../langchain.js'

/** A deterministic service log: mostly INFO lines, a few ERROR timeouts. */
function buildLog(lines) {
  const out = []
  for (let i = 1; i <= lines; i++) {
    const level = i % 9973 === 0 ? 'ERROR payments: upstream timeout after 30000 ms' : `INFO  http: GET /api/orders/${i} 200`
    out.push(`2026-11-22T10:${String(i % 60).padStart(2, '0')}:00Z ${level} (order=${i})`)
  }
  return out.join('\n')
}
const log = buildLog(40_000)

const fetchLogs = tool(async () => log, {
  name: 'fetch_logs',
  description: 'Returns the service log of the last hour.',
  schema: { type: 'object', properties: {} },
})

/** The reference a preview lists, read as a model would read it. */
const referenceIn = (text) => /\[Stored references:\]\n\s+(\S+)/.exec(text)[1]
const lastToolText = (messages) => String(messages.filter((m) => m.type === 'tool').at(-1).content)

// The scripted model: call the tool, then grep the stored log, then answer.
const model = fakeModel()
  .respondWithTools([{ name: 'fetch_logs', args: {}, id: 'call_1' }])
  .respond((messages) =>
    new AIMessage({
      content: '',
      tool_calls: [{ name: 'retrieve_offloaded_content', args: { reference: referenceIn(lastToolText(messages)), pattern: 'ERROR', context_lines: 0 }, id: 'call_2' }],
    }),
  )
  .respond((messages) => new AIMessage(`Found these errors:\n${lastToolText(messages)}`))

const agent = createAgent({
  model,
  tools: [fetchLogs],
  // The offloader first, then toolErrorMiddleware: a failing tool reaches the model as it would without middleware.
  middleware: [contextOffloaderMiddleware({ maxResultTokens: 2_000, previewTokens: 200 }), toolErrorMiddleware({ onError: (error) => `${error}\n Please fix your mistakes.` })],
  checkpointer: new MemorySaver(),
})

const result = await agent.invoke({ messages: [new HumanMessage('Why did payments fail?')] }, { configurable: { thread_id: 'demo' } })

const preview = lastToolText(model.calls[1].messages)
console.log(`The tool returned ${log.length.toLocaleString('en-US')} characters; the model saw ${preview.length.toLocaleString('en-US')}:\n`)
console.log(preview)
console.log('\nThe model grepped the stored log and got:\n')
console.log(lastToolText(model.calls[2].messages))
console.log(`\nFinal answer:\n${result.messages.at(-1).content}`)
