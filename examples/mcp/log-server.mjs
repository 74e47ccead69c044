// A tiny MCP server (stdio) with one tool, `read_log`, that returns a 40,000-line service
// log: the kind of result that floods a client's context. The proxy example wraps it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'

const log = Array.from({ length: 40_000 }, (_, i) =>
  i % 9973 === 0 && i > 0
    ? `10:${String(i % 60).padStart(2, '0')} ERROR payments: upstream timeout (order=${i})`
    : `10:${String(i % 60).padStart(2, '0')} INFO  GET /api/orders/${i} 200`,
).join('\n')

const server = new McpServer({ name: 'log-server', version: '1.0.0' })
server.registerTool('read_log', { description: 'Returns the service log of the last hour.' }, async () => ({
  content: [{ type: 'text', text: log }],
}))
await server.connect(new StdioServerTransport())
