// The MCP proxy (`context-offloader/mcp`): an MCP server that relays everything between a
// client and an upstream server unchanged, except that a tool result too large for the
// context is stored and replaced by its preview and references, and a
// `retrieve_offloaded_content` tool is added for reading it back. Built on the SDK's
// low-level `Server`/`Client` with fallback handlers, so that requests, results and
// schemas pass through without being parsed into the SDK's models.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { randomUUID } from 'node:crypto'
import { ErrorCode, InitializeRequestSchema, McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe } from '../numbers.js'
import { Offloader } from '../offloader.js'
import { RETRIEVAL_TOOL_NAME } from '../retrieval-schema.js'
import { describeExit } from './child-transport.js'
import { hasMedia, mediaItem, offloadedToolResult, partCharacters, splitToolResult } from './results.js'
import { progressAtOnce, RelayClient, upstreamTransportFactory } from './upstream.js'

/** The longest timer Node takes (about 24.8 days): "no timeout" for forwarded requests (`Infinity` would fire at once). */
const NO_TIMEOUT = 2 ** 31 - 1

/** The proxy's defaults where they differ from the core's: there is no model to ask, and references are scoped to the MCP session. */
export const PROXY_DEFAULTS = Object.freeze({ tokenizer: 'o200k_base', references: 'opaque', retrieval: 'extended' })

/** The proxy's own options (the rest are the core's `Offloader` options). */
const PROXY_OPTIONS = new Set(['upstream', 'offloadMedia', 'timeoutMs', 'maxMessageBytes', 'log'])

/** A `Server` that checks no capability: what it relays is the upstream's to declare. */
class RelayServer extends Server {
  assertCapabilityForMethod() {}
  assertNotificationCapability() {}
  assertRequestHandlerCapability() {}
  assertTaskCapability() {}
  assertTaskHandlerCapability() {}
  /** Called once the downstream connection closed (set by the proxy). */
  onDownstreamClose = undefined
  _onclose() {
    super._onclose()
    this.onDownstreamClose?.()
  }

  /** Progress the client reports on a request of the upstream is relayed as it arrives (see `progressAtOnce`). */
  _onnotification(notification) {
    if (!progressAtOnce(this, notification)) super._onnotification(notification)
  }

  /** A cancellation aborts its call whatever the id (the SDK skips the ids `0` and `''`). */
  async _oncancel(notification) {
    const requestId = notification.params?.requestId
    if (requestId === undefined) return
    this._requestHandlerAbortControllers.get(requestId)?.abort(notification.params.reason)
  }
}

/**
 * An error answered to the client as it is: its `code`, `message` (not prefixed as the
 * SDK's `McpError` prefixes it) and `data`.
 */
class RelayedError extends Error {
  constructor(code, message, data) {
    super(message)
    this.code = code
    if (data !== undefined) this.data = data
  }
}

/** The upstream's error for a relayed request, as the client should see it. */
function relayedError(err) {
  if (err instanceof McpError) return new RelayedError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data)
  return new RelayedError(ErrorCode.InternalError, String(err?.message ?? err))
}

/** Tool names of tasks kept at most (the oldest are forgotten first). */
const MAX_TASKS = 1024
/** Stored media kept at most for the retrieval tool to answer as content (the oldest are forgotten first). */
const MAX_MEDIA = 4096

/** Remembers `key` → `value` in `map`, forgetting the oldest entry beyond `max`. */
function remember(map, key, value, max) {
  map.delete(key)
  map.set(key, value)
  if (map.size > max) map.delete(map.keys().next().value)
}

/** Whether a retrieval input asks for a whole stored block (no search, range, query or page). */
function asksWhole(input) {
  return input && typeof input === 'object' && ['pattern', 'line_range', 'context_lines', 'query', 'page', 'list'].every((k) => input[k] == null)
}

/** Whether a retrieval answer is an error (`isError` on the tool result). */
const isErrorAnswer = (text) => /^(Error:|Reference not found)/.test(text)

/** A tool as the client sees it: without `outputSchema`, since an offloaded result carries no `structuredContent`. */
function withoutOutputSchema(tool) {
  const { outputSchema: _dropped, ...rest } = tool
  return rest
}

/** Checks the proxy's own options. */
function checkProxyOptions(options) {
  const { offloadMedia, timeoutMs, maxMessageBytes, log } = options
  if (offloadMedia !== undefined && typeof offloadMedia !== 'boolean') throw new TypeError(`offloadMedia must be a boolean, got ${describe(offloadMedia)}`)
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && timeoutMs <= NO_TIMEOUT)) {
    throw new RangeError(`timeoutMs must be a positive number of milliseconds up to ${NO_TIMEOUT}, got ${describe(timeoutMs)}`)
  }
  if (maxMessageBytes !== undefined && !(Number.isSafeInteger(maxMessageBytes) && maxMessageBytes > 0)) {
    throw new RangeError(`maxMessageBytes must be a positive integer, got ${describe(maxMessageBytes)}`)
  }
  if (log !== undefined && typeof log !== 'function') throw new TypeError(`log must be a function of one message, got ${describe(log)}`)
}

/** The offloader's options: the core's, with the proxy's defaults, and the media rule when media are offloaded. */
function offloaderOptionsOf(options) {
  const core = { ...PROXY_DEFAULTS }
  for (const [name, value] of Object.entries(options)) if (!PROXY_OPTIONS.has(name)) core[name] = value
  if (options.offloadMedia) {
    // Media count as their base64 text would (with the text, 4 characters per token): a
    // large image is offloaded even when the text is short.
    const given = core.shouldOffload
    const limit = core.maxResultTokens ?? 2500
    core.shouldOffload = async (call, result) => {
      const decided = given ? await given(call, result) : undefined
      if (decided !== undefined) return decided
      return hasMedia(result.content) && partCharacters(result.content) / 4 > limit ? true : undefined
    }
  }
  return core
}

/**
 * Creates the proxy: an MCP `Server` to connect to any transport (stdio, Streamable
 * HTTP, in memory). It reaches the upstream when the client's `initialize` arrives,
 * forwarding that request as it is (the client's own info and capabilities).
 * @param {import('../../mcp.d.ts').OffloadingProxyOptions} options
 * @returns {import('../../mcp.d.ts').OffloadingProxy}
 */
export function createOffloadingProxy(options) {
  if (options === null || typeof options !== 'object') throw new TypeError(`createOffloadingProxy() takes { upstream, ...options }, got ${describe(options)}`)
  checkProxyOptions(options)
  const makeTransport = upstreamTransportFactory(options.upstream, { maxMessageBytes: options.maxMessageBytes })
  const offloader = new Offloader(offloaderOptionsOf(options))
  const offloadMedia = options.offloadMedia === true
  const timeout = options.timeoutMs ?? NO_TIMEOUT
  const log = options.log ?? ((message) => process.stderr.write(`context-offloader mcp: ${message}\n`))
  const neverOffload = new Set(options.neverOffload ?? [])
  const retrieval = offloader.retrievalTool
  const retrievalToolDefinition = {
    name: retrieval.name,
    description: retrieval.description,
    inputSchema: retrieval.inputSchema,
    annotations: { title: 'Retrieve offloaded content', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  }

  const server = new RelayServer({ name: 'context-offloader', version: '0' }, { capabilities: {} })
  /** @type {RelayClient | undefined} */
  let client
  let transport
  let upstreamCapabilities = {}
  /** The protocol version the upstream agreed to. */
  let protocolVersion
  /** The upstream's connection, once `initialize` started it. */
  let connected
  /** How the upstream ended, once it has. */
  let ended
  let downstreamClosed = false
  let resolveEnded
  const upstreamEnded = new Promise((resolve) => {
    resolveEnded = resolve
  })
  /** Downstream requests being relayed, most recent last (what upstream messages are sent with, over Streamable HTTP). */
  const inFlight = []
  /** Answers being made (a result being offloaded): the connection closes after them. */
  const answering = new Set()
  /** Tool names of tasks the upstream created for a `tools/call`, by task id (their results come from `tasks/result`). */
  const taskTools = new Map()
  /** Media this proxy stored, by the reference the client was given: what it was, to answer it back as content. */
  const storedMedia = new Map()
  /** This connection's session: what it stores is tagged with it, and removed when it closes (with opaque references, nothing else can read it). */
  const sessionId = `mcp-${randomUUID()}`
  const opaque = (options.references ?? PROXY_DEFAULTS.references) === 'opaque'
  let cleanup = Promise.resolve()
  let calls = 0

  const endedError = (method) => new RelayedError(ErrorCode.ConnectionClosed, `the upstream server ${describeExit(ended.exit)} during ${method}`)

  /** The upstream's connection closed: calls in flight get an error naming the exit, then the client's connection closes. */
  function upstreamClosed() {
    if (ended) return
    ended = { exit: transport?.exit }
    // Whether the client had gone first (then the upstream was closed for it): a client
    // that goes after the upstream, while the last answers go out, ends nothing.
    const closedByClient = downstreamClosed
    if (!closedByClient) log(`the upstream server ${describeExit(ended.exit)}`)
    // The rejected calls are answered in the microtasks that follow; the close comes after them.
    setTimeout(async () => {
      const exit = ended.exit ?? {}
      // Results the upstream answered before it went are still being offloaded: they are sent first.
      await Promise.allSettled([...answering])
      await new Promise((resolve) => setImmediate(resolve))
      if (!closedByClient) await server.close().catch(() => {})
      await cleanup
      resolveEnded({ code: exit.code ?? null, signal: exit.signal ?? null, message: `the upstream server ${describeExit(ended.exit)}`, closedByClient })
    }, 0)
  }

  async function connectUpstream(params) {
    transport = makeTransport()
    client = new RelayClient(params?.clientInfo ?? { name: 'context-offloader', version: '0' }, { capabilities: params?.capabilities ?? {} })
    client.onclose = upstreamClosed
    client.onerror = (err) => {
      // A connection being closed on purpose reports its aborted streams: not news.
      if (!downstreamClosed && !ended) log(`upstream: ${err?.message ?? err}`)
    }
    client.fallbackRequestHandler = async (request, extra) => {
      // The upstream's requests (sampling, elicitation, roots) go to the client, with their progress.
      const { progressToken, ...meta } = request.params?._meta ?? {}
      const params = progressToken === undefined ? request.params : { ...request.params, _meta: Object.keys(meta).length > 0 ? meta : undefined }
      try {
        return await server.request({ method: request.method, params }, ResultSchema, {
          signal: extra.signal,
          timeout: NO_TIMEOUT,
          relatedRequestId: inFlight.at(-1),
          onprogress:
            progressToken === undefined
              ? undefined
              : (progress) => {
                  extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => {})
                },
        })
      } catch (err) {
        throw relayedError(err)
      }
    }
    client.fallbackNotificationHandler = async (notification) => {
      if (!downstreamClosed) await server.notification(notification, { relatedRequestId: inFlight.at(-1) })
    }
    try {
      // The SDK's handshake would send the proxy's info and the latest protocol version:
      // the client's own `initialize` is forwarded instead.
      await Protocol.prototype.connect.call(client, transport)
    } catch (err) {
      upstreamClosed()
      throw new RelayedError(ErrorCode.InternalError, String(err?.message ?? err))
    }
    let result
    try {
      result = await client.request({ method: 'initialize', params }, ResultSchema, { timeout })
    } catch (err) {
      if (ended) throw endedError('initialize')
      // A refused initialize leaves nothing to relay: the upstream goes, once the answer is out.
      setImmediate(() => closeUpstream())
      if (!(err instanceof McpError) && options.upstream?.url !== undefined) {
        const cause = err?.cause?.code ?? err?.cause?.message
        throw new RelayedError(ErrorCode.InternalError, `could not reach the upstream server at ${options.upstream.url}: ${err?.message ?? err}${cause ? ` (${cause})` : ''}`)
      }
      throw relayedError(err)
    }
    transport.setProtocolVersion?.(result.protocolVersion)
    protocolVersion = result.protocolVersion
    upstreamCapabilities = result.capabilities ?? {}
    return { ...result, capabilities: { ...upstreamCapabilities, tools: upstreamCapabilities.tools ?? {} } }
  }

  /** `answer`, counted among the answers being made until it settles. */
  function tracked(answer) {
    answering.add(answer)
    const done = () => answering.delete(answer)
    answer.then(done, done)
    return answer
  }

  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    if (connected) throw new RelayedError(ErrorCode.InvalidRequest, 'initialize was already received on this connection')
    connected = connectUpstream(request.params)
    return tracked(connected)
  })
  server.oninitialized = () => {
    client?.notification({ method: 'notifications/initialized' }).catch((err) => log(`upstream: ${err?.message ?? err}`))
  }

  /** Relays one request upstream, with its progress notifications (under the client's own token) and cancellation. */
  async function forward(request, extra) {
    const { progressToken, ...meta } = request.params?._meta ?? {}
    let params = request.params
    if (progressToken !== undefined) params = { ...params, _meta: Object.keys(meta).length > 0 ? meta : undefined }
    inFlight.push(request.id)
    let progressed = false
    try {
      const result = await client.request({ method: request.method, params }, ResultSchema, {
        signal: extra.signal,
        timeout,
        resetTimeoutOnProgress: true,
        onprogress:
          progressToken === undefined
            ? undefined
            : (progress) => {
                progressed = true
                extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => {})
              },
      })
      // The SDK's client, too, takes a result at once and a notification a microtask
      // later: the result goes out a turn after the last progress, not in its chunk.
      if (progressed) await new Promise((resolve) => setImmediate(resolve))
      return result
    } catch (err) {
      if (ended) throw endedError(request.method)
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout && timeout !== NO_TIMEOUT) {
        throw new RelayedError(ErrorCode.RequestTimeout, `the upstream server did not answer ${request.method} within ${timeout} ms`)
      }
      throw relayedError(err)
    } finally {
      inFlight.splice(inFlight.indexOf(request.id), 1)
    }
  }

  /** A tool result as the client gets it: offloaded when too large, else as it came. */
  async function offloaded(result, toolName) {
    const split = splitToolResult(result, offloadMedia)
    if (!split) return result
    calls += 1
    let answer
    try {
      answer = await offloader.offloadResult({
        toolName: typeof toolName === 'string' && toolName ? toolName : 'tool',
        toolCallId: `call${calls}`,
        content: split.parts,
        sessionId,
        isError: result.isError === true,
      })
    } catch (err) {
      log(`a result of ${JSON.stringify(toolName)} was passed on as it came: ${err?.message ?? err}`)
      return result
    }
    if (!answer) return result
    if (answer.references.length === split.parts.length) {
      answer.references.forEach((ref, i) => {
        const origin = split.media[i]
        if (origin) remember(storedMedia, ref.reference, { ...origin, storageReference: ref.storageReference ?? ref.reference }, MAX_MEDIA)
      })
    }
    return offloadedToolResult(result, answer, split.kept)
  }

  /** The retrieval tool's answer: a stored medium as the item it was, anything else as the core answers it. */
  async function retrieve(input) {
    const medium = asksWhole(input) ? storedMedia.get(input.reference) : undefined
    if (medium) {
      try {
        const { content } = await offloader.storage.retrieve(medium.storageReference)
        return { content: [mediaItem(medium, content)] }
      } catch {
        storedMedia.delete(input.reference)
      }
    }
    const text = await retrieval.execute(input ?? {}, { sessionId })
    return { content: [{ type: 'text', text }], ...(isErrorAnswer(text) ? { isError: true } : {}) }
  }

  async function listTools(request, extra) {
    const first = request.params?.cursor === undefined
    if (!upstreamCapabilities.tools) return { tools: first ? [retrievalToolDefinition] : [] }
    const result = await forward(request, extra)
    const tools = (Array.isArray(result.tools) ? result.tools : []).filter((tool) => {
      if (tool?.name !== RETRIEVAL_TOOL_NAME) return true
      log(`the upstream's own tool ${RETRIEVAL_TOOL_NAME} is hidden behind the proxy's`)
      return false
    })
    const shown = tools.map((tool) => (tool?.outputSchema !== undefined && !neverOffload.has(tool.name) ? withoutOutputSchema(tool) : tool))
    if (first) shown.push(retrievalToolDefinition)
    return { ...result, tools: shown }
  }

  async function callTool(request, extra) {
    const name = request.params?.name
    if (name === RETRIEVAL_TOOL_NAME) return retrieve(request.params?.arguments)
    const result = await forward(request, extra)
    const taskId = result?.task?.taskId
    if (typeof taskId === 'string' && !Array.isArray(result.content)) {
      remember(taskTools, taskId, name, MAX_TASKS)
      return result
    }
    return offloaded(result, name)
  }

  server.fallbackRequestHandler = (request, extra) => tracked(relay(request, extra))

  async function relay(request, extra) {
    if (!connected) throw new RelayedError(ErrorCode.InvalidRequest, `${request.method} before initialize: the proxy reaches the upstream server on initialize`)
    await connected
    if (ended) throw endedError(request.method)
    switch (request.method) {
      case 'tools/list':
        return listTools(request, extra)
      case 'tools/call':
        return callTool(request, extra)
      case 'tasks/result': {
        const result = await forward(request, extra)
        const taskId = request.params?.taskId
        return offloaded(result, taskTools.get(taskId))
      }
      default:
        return forward(request, extra)
    }
  }
  server.fallbackNotificationHandler = async (notification) => {
    if (!connected) return
    await connected.catch(() => {})
    if (!ended) await client.notification(notification).catch((err) => log(`upstream: ${err?.message ?? err}`))
  }
  /** Ends the upstream: its HTTP session is ended first (DELETE), a child is stopped. */
  async function closeUpstream() {
    if (!client || ended) return
    if (transport?.sessionId !== undefined && typeof transport.terminateSession === 'function') {
      await transport.terminateSession().catch(() => {})
    }
    await client.close().catch(() => {})
  }

  server.onerror = (err) => log(`client: ${err?.message ?? err}`)
  server.onDownstreamClose = () => {
    downstreamClosed = true
    // With opaque references nothing can read this session's content any more: it goes.
    if (opaque && typeof offloader.storage?.deleteSession === 'function') {
      cleanup = offloader.storage.deleteSession(sessionId).then(
        () => {},
        (err) => log(`what this session stored could not be removed: ${err?.message ?? err}`),
      )
    }
    if (client && !ended) closeUpstream()
    else if (!client) cleanup.then(() => resolveEnded({ code: null, signal: null, message: 'the client closed the connection before initialize', closedByClient: true }))
  }

  /** Settles once every request in flight has been answered (new ones included). */
  async function whenIdle() {
    while (answering.size > 0) await Promise.allSettled([...answering])
    await new Promise((resolve) => setImmediate(resolve))
  }

  Object.defineProperties(server, {
    offloader: { value: offloader, enumerable: true },
    whenIdle: { value: whenIdle, enumerable: true },
    upstreamEnded: { value: upstreamEnded, enumerable: true },
    protocolVersion: { get: () => protocolVersion, enumerable: true },
  })
  return server
}
