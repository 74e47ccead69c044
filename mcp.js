// `context-offloader/mcp`: the MCP proxy, for use from code (the command line is
// `npx context-offloader mcp`). See lib/mcp/proxy.js.
export { createOffloadingProxy, PROXY_DEFAULTS } from './lib/mcp/proxy.js'
export { LineTransport } from './lib/mcp/line-transport.js'
export { ChildProcessTransport } from './lib/mcp/child-transport.js'
