// The framework-neutral core on its own: any agent loop can call it. A tool returns a
// large JSON document; the offloader stores it and hands back the text the model should
// see instead; the model's retrieval calls (scripted here) are answered by the
// retrieval tool, within the session the result was offloaded in.
import { Offloader } from '../../core.js'

/** What a tool might return: 2,000 orders as JSON. */
const orders = {
  orders: Array.from({ length: 2_000 }, (_, i) => ({
    id: `ord_${1000 + i}`,
    status: i % 97 === 0 ? 'failed' : 'shipped',
    total: Math.round(((i * 37) % 500) * 100) / 100,
  })),
}

const offloader = new Offloader({ references: 'opaque', retrieval: 'extended', preview: 'structure' })
const sessionId = 'thread-42'

// 1. After the tool ran: offload it if it is too large for the context.
const offloaded = await offloader.offloadResult({ toolName: 'list_orders', toolCallId: 'call_1', content: orders, sessionId })
console.log(`The tool returned ${JSON.stringify(orders).length.toLocaleString('en-US')} characters of JSON.`)
console.log(`The model sees ${offloaded.text.length.toLocaleString('en-US')} characters instead:\n`)
console.log(offloaded.text)

// 2. The model asks for what it needs, through the retrieval tool (any framework's tool
// shape can wrap it: name, description, JSON Schema, execute).
const { name, inputSchema, execute } = offloader.retrievalTool
console.log(`\n${name} takes ${Object.keys(inputSchema.properties).join(', ')}.`)
const reference = offloaded.references[0].reference
const query = '.orders[] | select(.status == "failed") | .id'
console.log(`\nThe model queries ${reference} with ${query}:\n`)
console.log(await execute({ reference, query }, { sessionId }))

// 3. Another session cannot read it.
console.log('\nFrom another session:', await execute({ reference, query }, { sessionId: 'thread-7' }))
console.log('\nstats:', JSON.stringify(offloader.stats()))
