// The proxy over Streamable HTTP (`--listen host:port`): `http://host:port/mcp`, one
// session per `Mcp-Session-Id`, each with its own proxy and upstream. Requests whose
// `Host` or `Origin` is not localhost are refused with 403 (DNS-rebinding protection, as
// the MCP specification asks of local servers).
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'

/** Events kept per session for clients that reconnect with `Last-Event-ID` (the oldest are dropped first). */
const KEPT_EVENTS = 512

/** The largest request body taken (the SDK's default is 4 MiB; a client's sampling answer or a tool's arguments can be larger). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024

/** How long a client waits before reconnecting a closed SSE stream, in ms (sent as `retry:`). */
const RETRY_MS = 1000

/**
 * The last {@link KEPT_EVENTS} SSE events of one session, so that a client whose stream
 * closed gets what it missed when it reconnects. (With an event store, the SDK's transport
 * also opens every SSE stream with a priming event, as resumable servers should.)
 */
class RecentEvents {
  /** Events by id, in the order they were sent. */
  #events = new Map()
  #next = 1

  async storeEvent(streamId, message) {
    const eventId = `${streamId}_${this.#next++}`
    this.#events.set(eventId, { streamId, message })
    if (this.#events.size > KEPT_EVENTS) this.#events.delete(this.#events.keys().next().value)
    return eventId
  }

  async getStreamIdForEventId(eventId) {
    return this.#events.get(eventId)?.streamId
  }

  async replayEventsAfter(lastEventId, { send }) {
    const last = this.#events.get(lastEventId)
    if (!last) throw new Error(`event ${lastEventId} is no longer kept`)
    let after = false
    for (const [eventId, { streamId, message }] of this.#events) {
      // Priming events carry no message.
      if (after && streamId === last.streamId && message && 'jsonrpc' in message) await send(eventId, message)
      if (eventId === lastEventId) after = true
    }
    return last.streamId
  }
}

/**
 * Makes a request's `MCP-Protocol-Version` header name the session's negotiated version
 * when it names another supported one: the version belongs to the session, but the SDK's
 * transport decides per request from the header whether a stream can be resumed.
 */
function alignProtocolVersion(req, negotiated) {
  const sent = req.headers['mcp-protocol-version']
  if (!negotiated || sent === undefined || sent === negotiated || !SUPPORTED_PROTOCOL_VERSIONS.includes(sent)) return
  req.headers['mcp-protocol-version'] = negotiated
  // The transport builds its request from the raw headers.
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === 'mcp-protocol-version') req.rawHeaders[i + 1] = negotiated
  }
}

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
  /** Live sessions (their transport and proxy), by session id. */
  const sessions = new Map()
  const handle = async (req, res) => {
    const refusal = rebindingRefusal(req.headers)
    if (refusal) return refuse(res, 403, refusal)
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') return refuse(res, 404, 'Not found: the MCP endpoint is /mcp')
    const sessionId = req.headers['mcp-session-id']
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId)
      if (!session) return refuse(res, 404, 'Session not found')
      alignProtocolVersion(req, session.proxy.protocolVersion)
      return session.transport.handleRequest(req, res)
    }
    if (req.method !== 'POST') return refuse(res, 400, 'Bad Request: no valid session id (Mcp-Session-Id)')
    // A new session: its proxy reaches the upstream only on initialize.
    const proxy = createProxy()
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, { transport, proxy }),
      eventStore: new RecentEvents(),
      retryInterval: RETRY_MS,
      maxRequestBodySize: MAX_REQUEST_BYTES,
    })
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId)
    }
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
      await Promise.all([...sessions.values()].map((s) => s.proxy.close().catch(() => {})))
      const closed = new Promise((resolve) => server.close(() => resolve()))
      server.closeAllConnections?.()
      await closed
    },
  }
}
