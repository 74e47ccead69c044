// The proxy over Streamable HTTP (`--listen host:port`): `http://host:port/mcp`, one
// session per `Mcp-Session-Id`, each with its own proxy and upstream. Requests whose
// `Host` or `Origin` is not localhost are refused with 403 (DNS-rebinding protection, as
// the MCP specification asks of local servers).
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

/** The host names a local server answers to. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/** The host name of a `Host` header or an origin (`null` when it cannot be read). */
function hostnameOf(value, withScheme) {
  try {
    return new URL(withScheme ? value : `http://${value}`).hostname
  } catch {
    return null
  }
}

/** A JSON-RPC error answer with an HTTP status. */
function refuse(res, status, message) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }))
}

/** Why a request is refused for its `Host` or `Origin`, or `undefined`. */
export function rebindingRefusal(headers) {
  const host = headers.host
  if (typeof host !== 'string' || !LOCAL_HOSTS.has(hostnameOf(host, false))) return `Invalid Host: ${host ?? '(none)'}`
  const origin = headers.origin
  if (origin !== undefined && origin !== 'null' && !LOCAL_HOSTS.has(hostnameOf(origin, true))) return `Invalid Origin: ${origin}`
  if (origin === 'null') return 'Invalid Origin: null'
  return undefined
}

/**
 * Serves proxies over Streamable HTTP at `/mcp`. `createProxy()` makes the proxy of a new
 * session. Resolves once listening, with the URL and a `close()` that ends every session.
 * @param {{ host: string, port: number, createProxy: () => import('@modelcontextprotocol/sdk/server/index.js').Server, log: (message: string) => void }} options
 */
export async function listenHttp({ host, port, createProxy, log }) {
  /** Live sessions: their transports, by session id. */
  const sessions = new Map()
  const handle = async (req, res) => {
    const refusal = rebindingRefusal(req.headers)
    if (refusal) return refuse(res, 403, refusal)
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') return refuse(res, 404, 'Not found: the MCP endpoint is /mcp')
    const sessionId = req.headers['mcp-session-id']
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId)
      if (!transport) return refuse(res, 404, 'Session not found')
      return transport.handleRequest(req, res)
    }
    if (req.method !== 'POST') return refuse(res, 400, 'Bad Request: no valid session id (Mcp-Session-Id)')
    // A new session: its proxy reaches the upstream only on initialize.
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
    })
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId)
    }
    const proxy = createProxy()
    await proxy.connect(transport)
    await transport.handleRequest(req, res)
    // Anything but an initialize made no session: its proxy goes.
    if (!transport.sessionId) await proxy.close()
  }
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      log(`HTTP: ${err?.message ?? err}`)
      if (!res.headersSent) refuse(res, 500, 'Internal error')
      else res.end()
    })
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.removeListener('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${shownHost}:${address.port}/mcp`,
    port: address.port,
    sessions,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})))
      const closed = new Promise((resolve) => server.close(() => resolve()))
      server.closeAllConnections?.()
      await closed
    },
  }
}
