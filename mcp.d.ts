// Typings of `context-offloader/mcp`: the MCP proxy from code. The command line is
// `npx context-offloader mcp [options] -- <command> [args...]`.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { Offloader, OffloaderOptions } from './core.js'

/** An upstream server started as a child process, over stdio. */
export interface StdioUpstream {
  /** The command (resolved on PATH; `npx`, `uvx`, `docker` and the like work on every platform). */
  command: string
  args?: string[]
  /** Added to the proxy's own environment, which the child inherits whole. */
  env?: Record<string, string>
  cwd?: string
  /** The child's stderr: the proxy's (`'inherit'`, default), a pipe, or discarded. */
  stderr?: 'inherit' | 'pipe' | 'ignore'
}

/** An upstream server reached over Streamable HTTP. */
export interface HttpUpstream {
  /** Its endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string | URL
  /** Headers sent with every request (authorization). */
  headers?: Record<string, string>
}

/** Options of {@link createOffloadingProxy}: the core's (with the proxy's defaults), the upstream, and the proxy's own. */
export interface OffloadingProxyOptions extends Omit<OffloaderOptions, 'tokenizer' | 'references' | 'retrieval'> {
  /**
   * The upstream server: a command to start, a URL, or a transport of your own (not
   * started yet; it serves this proxy's one connection).
   */
  upstream: StdioUpstream | HttpUpstream | Transport
  /** How tokens are counted. Default `'o200k_base'` (there is no model to ask). */
  tokenizer?: OffloaderOptions['tokenizer']
  /** What the client sees as references. Default `'opaque'`: ids scoped to this proxy's MCP session. */
  references?: 'paths' | 'opaque'
  /** The retrieval tool. Default `'extended'` (pages, jq `query`, `list`). */
  retrieval?: 'sdk' | 'extended'
  /** Also offload large images, audio and binary resources (they count as their base64 text, 4 characters per token). Default false. */
  offloadMedia?: boolean
  /** Answer a request the upstream has not answered within this many ms with an error. Default: no limit (the client's own timeout governs). */
  timeoutMs?: number
  /** The longest message read from a child upstream, in bytes. Default 1 GiB. */
  maxMessageBytes?: number
  /** Where diagnostics go. Default: one line each on stderr. */
  log?: (message: string) => void
}

/** How the upstream's connection ended. */
export interface UpstreamEnd {
  /** The child's exit code (`null` when killed by a signal, or for an HTTP upstream). */
  code: number | null
  /** The signal that ended the child, if any. */
  signal: string | null
  /** `the upstream server exited with code 3`, `... was killed by SIGKILL`, `... closed its connection`. */
  message: string
  /** Whether the client's side closed first (then the proxy ended the upstream). */
  closedByClient: boolean
}

/** The proxy: an MCP `Server` to connect to any transport, with what it adds. */
export interface OffloadingProxy extends Server {
  /** The offloader behind it (its `stats()`, its storage). */
  readonly offloader: Offloader
  /** Settles when the upstream's connection has ended (calls in flight were answered first). */
  readonly upstreamEnded: Promise<UpstreamEnd>
  /** The protocol version the upstream agreed to, once initialized. */
  readonly protocolVersion: string | undefined
  /** Settles once every request in flight has been answered (to close after a client's last request). */
  whenIdle(): Promise<void>
}

/**
 * Creates an MCP server that relays a client to an upstream server, unchanged except
 * that tool results above `maxResultTokens` are stored and replaced by a preview and
 * references, and a `retrieve_offloaded_content` tool reads them back. The upstream is
 * reached when the client's `initialize` arrives, with the client's own info and
 * capabilities.
 */
export declare function createOffloadingProxy(options: OffloadingProxyOptions): OffloadingProxy

/** The proxy's defaults where they differ from the core's. */
export declare const PROXY_DEFAULTS: Readonly<{ tokenizer: 'o200k_base'; references: 'opaque'; retrieval: 'extended' }>

/**
 * MCP's stdio framing over any pair of streams, read in linear time (the SDK's reader is
 * quadratic and stops at 10 MiB). A line that is not JSON-RPC is reported to `onerror`
 * and skipped; the end of the input closes the transport.
 */
export declare class LineTransport implements Transport {
  /**
   * @param options `maxMessageBytes` (default 1 GiB); `replyToUnreadable`: answer a line
   *   that is not JSON with a Parse error (as a server should; default false)
   */
  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, options?: { maxMessageBytes?: number; replyToUnreadable?: boolean })
  onmessage?: (message: JSONRPCMessage) => void
  onerror?: (error: Error) => void
  onclose?: () => void
  /** Called when the input ends, instead of closing at once (call `close()` when done). */
  oninputend?: () => void
  start(): Promise<void>
  send(message: JSONRPCMessage): Promise<void>
  close(): Promise<void>
}

/**
 * A server started as a child process (with the whole environment), read with
 * {@link LineTransport}'s reader; it keeps how the child ended.
 */
export declare class ChildProcessTransport implements Transport {
  constructor(params: StdioUpstream & { maxMessageBytes?: number })
  onmessage?: (message: JSONRPCMessage) => void
  onerror?: (error: Error) => void
  onclose?: () => void
  /** How the child ended, once it has. */
  readonly exit: { code: number | null; signal: string | null } | undefined
  readonly pid: number | undefined
  /** The child's stderr with `stderr: 'pipe'`. */
  readonly stderr: NodeJS.ReadableStream | null
  start(): Promise<void>
  send(message: JSONRPCMessage): Promise<void>
  /** Closes the child's stdin, then sends SIGTERM and SIGKILL if it outlives each 2 s grace period. */
  close(): Promise<void>
}
