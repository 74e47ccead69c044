// The MCP proxy in front of an MCP server, as any MCP client uses it: the official SDK
// client starts `context-offloader mcp -- node log-server.mjs` (the same command and args
// a client's config file holds), calls a tool that returns a 40,000-line log, gets a
// short preview with a reference instead, and greps the stored log with the
// retrieve_offloaded_content tool the proxy adds. Run from the repository root:
//   node examples/mcp/main.mjs
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { fileURLToPath } from 'node:url'

const bin = fileURLToPath(new URL('../../bin/context-offloader.mjs', import.meta.url))
const server = fileURLToPath(new URL('./log-server.mjs', import.meta.url))

// In a client's config: "command": "npx", "args": ["-y", "context-offloader", "mcp", "--", "node", "log-server.mjs"]
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [bin, 'mcp', '--preview-tokens', '150', '--', process.execPath, server],
})
const client = new Client({ name: 'example-client', version: '1.0.0' })
await client.connect(transport)

const { tools } = await client.listTools()
console.log(`Tools through the proxy: ${tools.map((t) => t.name).join(', ')}\n`)

const result = await client.callTool({ name: 'read_log', arguments: {} })
const preview = result.content[0].text
console.log(`read_log returned a 1.5 MB log; the client received ${preview.length.toLocaleString('en-US')} characters:\n`)
console.log(preview)

const reference = /^ {2}(\S+) \(/m.exec(preview)[1]
const found = await client.callTool({ name: 'retrieve_offloaded_content', arguments: { reference, pattern: 'ERROR', context_lines: 0 } })
console.log('\nretrieve_offloaded_content with pattern ERROR:\n')
console.log(found.content[0].text)
await client.close()
