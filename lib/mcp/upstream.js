// The upstream side of the proxy: which transport reaches the server (a child process, a
// Streamable HTTP URL, or a transport the caller made), and the SDK's `Client` as a pure
// relay (no capability checks of its own: the client's capabilities are the upstream's
// business).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe } from '../numbers.js'
import { ChildProcessTransport } from './child-transport.js'

/**
 * Hands a progress notification to its handler as it arrives. The SDK hands
 * notifications to their handlers a microtask later but takes a result at once, so the
 * last progress of a call, read in the same chunk as its result, would find its call
 * finished and be dropped. Returns whether `notification` was progress.
 * @param {import('@modelcontextprotocol/sdk/shared/protocol.js').Protocol} protocol
 */
export function progressAtOnce(protocol, notification) {
  if (notification.method !== 'notifications/progress' || notification.params?.progressToken === undefined) return false
  try {
    protocol._onprogress(notification)
  } catch (err) {
    protocol._onerror(err)
  }
  return true
}

/** A `Client` that checks no capability: it forwards what the client asked for. */
export class RelayClient extends Client {
  assertCapabilityForMethod() {}
  assertNotificationCapability() {}
  assertRequestHandlerCapability() {}
  assertTaskCapability() {}
  assertTaskHandlerCapability() {}

  /** Progress is relayed as it arrives (see {@link progressAtOnce}). */
  _onnotification(notification) {
    if (!progressAtOnce(this, notification)) super._onnotification(notification)
  }
}

/** Transports of callers already in use by a proxy (a transport serves one connection). */
const claimed = new WeakSet()

/** Whether `value` looks like an SDK `Transport` (`start`, `send` and `close` methods). */
function isTransport(value) {
  return typeof value?.start === 'function' && typeof value?.send === 'function' && typeof value?.close === 'function'
}

/** Checks an optional string array option. */
function checkStrings(value, what) {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new TypeError(`${what} must be an array of strings, got ${describe(value)}`)
  return value
}

/**
 * Checks the `upstream` option and returns a function that makes its transport (one per
 * connection: an HTTP listener starts one upstream per session). A caller's own transport
 * is used once.
 * @param {unknown} upstream
 * @param {{ maxMessageBytes?: number }} [limits]
 * @returns {() => import('@modelcontextprotocol/sdk/shared/transport.js').Transport}
 */
export function upstreamTransportFactory(upstream, limits = {}) {
  if (isTransport(upstream)) {
    return () => {
      if (claimed.has(upstream)) throw new Error('upstream: a transport serves one connection; pass { command } or { url } to start one per session')
      claimed.add(upstream)
      return upstream
    }
  }
  if (upstream === null || typeof upstream !== 'object') {
    throw new TypeError(`upstream must be { command, args?, env?, cwd? }, { url } or a Transport, got ${describe(upstream)}`)
  }
  if (upstream.url !== undefined) {
    let url
    try {
      url = new URL(String(upstream.url))
    } catch {
      throw new TypeError(`upstream.url must be an http(s) URL, got ${describe(upstream.url)}`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`upstream.url must be an http(s) URL, got ${describe(upstream.url)}`)
    const headers = upstream.headers
    if (headers !== undefined && (headers === null || typeof headers !== 'object')) throw new TypeError(`upstream.headers must be an object of header names to values, got ${describe(headers)}`)
    return () => new StreamableHTTPClientTransport(url, headers ? { requestInit: { headers } } : undefined)
  }
  const { command, cwd, env } = upstream
  if (typeof command !== 'string' || command.length === 0) {
    throw new TypeError(`upstream.command must be a non-empty string (or give upstream.url), got ${describe(command)}`)
  }
  const args = checkStrings(upstream.args, 'upstream.args')
  if (cwd !== undefined && typeof cwd !== 'string') throw new TypeError(`upstream.cwd must be a string, got ${describe(cwd)}`)
  if (env !== undefined && (env === null || typeof env !== 'object' || !Object.values(env).every((v) => typeof v === 'string'))) {
    throw new TypeError(`upstream.env must be an object of strings (added to the proxy's environment), got ${describe(env)}`)
  }
  const stderr = upstream.stderr ?? 'inherit'
  if (!['inherit', 'pipe', 'ignore'].includes(stderr)) throw new TypeError(`upstream.stderr must be 'inherit', 'pipe' or 'ignore', got ${describe(stderr)}`)
  return () => new ChildProcessTransport({ command, args, env, cwd, stderr, maxMessageBytes: limits.maxMessageBytes })
}
