// The MCP proxy as clients use it: the official SDK `Client` over `StdioClientTransport`,
// talking to `context-offloader mcp ... -- <upstream>` in its own process.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { CLI } from './cli'

/** The scripted test server (see fixtures/mcp/scripted-server.mjs). */
export const SCRIPTED = [process.execPath, fileURLToPath(new URL('../fixtures/mcp/scripted-server.mjs', import.meta.url))]
/** The reference "everything" server from npm. */
export const EVERYTHING = [process.execPath, fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url))]
/** The reference filesystem server from npm (give it the allowed directory). */
export const FILESYSTEM = [process.execPath, fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', import.meta.url))]

export interface ProxyConnection {
  client: Client
  transport: StdioClientTransport
  /** What the proxy (and the upstream) wrote to stderr so far. */
  stderr: () => string
  /** The proxy's exit, once it exited. */
  exited: Promise<number | null>
}

export interface ConnectOptions {
  /** The proxy's flags (before `--`). */
  flags?: string[]
  /** The upstream command (after `--`); default the scripted server. */
  upstream?: string[]
  /** Added to the proxy's environment. */
  env?: Record<string, string>
  capabilities?: ClientCapabilities
  /** Called with the client before it connects (to set request handlers). */
  setup?: (client: Client) => void
  /** The client's stdio reader limit (the SDK's default is 10 MiB). */
  maxBufferSize?: number
}

/**
 * Calls `onLine` with each complete line `stream` writes (UTF-8, without its newline),
 * then `afterChunk` once per chunk read; `rest()` is what follows the last newline so far.
 */
export function readLines(stream: Readable, onLine: (line: string) => void, afterChunk?: () => void): { rest: () => string } {
  let buffered = ''
  stream.on('data', (d: Buffer) => {
    buffered += d.toString('utf8')
    let at
    while ((at = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      onLine(line)
    }
    afterChunk?.()
  })
  return { rest: () => buffered }
}

/** Starts the proxy and connects the official client to it. */
export async function connectProxy(options: ConnectOptions = {}): Promise<ProxyConnection> {
  const upstream = options.upstream ?? SCRIPTED
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...(options.flags ?? []), '--', ...upstream],
    env: { ...(process.env as Record<string, string>), ...options.env },
    stderr: 'pipe',
    maxBufferSize: options.maxBufferSize,
  })
  let err = ''
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString('utf8')
  })
  const client = new Client({ name: 'proxy-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} })
  options.setup?.(client)
  await client.connect(transport)
  const child = (transport as any)._process
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code: number | null) => resolve(code))
  })
  return { client, transport, stderr: () => err, exited }
}

/** The text of a tool result's first item. */
export function firstText(result: any): string {
  return result.content[0].text
}

/** The references a preview lists under `[Stored references:]`. */
export function referencesOf(text: string): string[] {
  const at = text.indexOf('[Stored references:]')
  if (at < 0) return []
  return [...text.slice(at).matchAll(/^ {2}(\S+) \(/gm)].map((m) => m[1])
}

/** Whether a process is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A JSON-RPC message as the scripted upstream sees it. */
export type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: any; result?: any; error?: any }

/**
 * An upstream server as a `Transport`: `answer(request, reply)` is called for every request;
 * `reply(...messages)` delivers messages to the proxy synchronously, in one turn (as if
 * read in one chunk).
 */
export function scriptedUpstream(answer: (request: Message, reply: (...messages: Message[]) => void) => void, capabilities: object = { tools: {} }) {
  const transport: any = {
    sent: [] as Message[],
    async start() {},
    async close() {
      transport.onclose?.()
    },
    async send(message: Message) {
      transport.sent.push(message)
      const reply = (...messages: Message[]) => {
        for (const m of messages) transport.onmessage?.(m)
      }
      if (message.method === 'initialize') {
        queueMicrotask(() =>
          reply({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities, serverInfo: { name: 'up', version: '9' } } }),
        )
      } else if (message.id !== undefined && message.method) {
        queueMicrotask(() => answer(message, reply))
      }
    },
  }
  return transport
}
