// The MCP proxy at its edges: what a client or an upstream server can do that the proxy
// must survive without losing data, hanging a call, leaking a process or memory, or
// breaking the protocol. Each test states the expected behaviour; the proxy is driven
// over raw stdio where the official client would hide the defect, and with the official
// `Client` elsewhere.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { createOffloadingProxy } from '../mcp.js'
import { InMemoryStorage } from '../core.js'
import { listenHttp } from '../lib/mcp/http.js'
import { CLI, cli, expectOneLineError } from './helpers/cli'
import { SCRIPTED, alive, connectProxy, firstText, readLines, type ProxyConnection } from './helpers/mcp-kit'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A raw upstream server (newline-delimited JSON-RPC, no SDK): `node raw-upstream.mjs BODY
 * [PIDFILE]`, where BODY is the body of `(msg, send, initialize) => void`, called for every
 * message it reads. `initialize(msg)` answers an initialize request with tools. It writes
 * its process id to PIDFILE, and exits once its stdin ends and nothing else holds it.
 */
const RAW_UPSTREAM_SOURCE = `
import { writeFileSync } from 'node:fs'
const [body, pidFile] = process.argv.slice(2)
if (pidFile) writeFileSync(pidFile, String(process.pid))
const send = (message, done) => process.stdout.write(JSON.stringify(message) + '\\n', done)
const initialize = (msg) => send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw-upstream', version: '1' } } })
const handle = new Function('msg', 'send', 'initialize', body)
let buffered = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk) => {
  buffered += chunk
  let at
  while ((at = buffered.indexOf('\\n')) >= 0) {
    const line = buffered.slice(0, at)
    buffered = buffered.slice(at + 1)
    if (line.trim()) handle(JSON.parse(line), send, initialize)
  }
})
`

let dir: string
let rawUpstreamPath: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-attack-'))
  rawUpstreamPath = join(dir, 'raw-upstream.mjs')
  writeFileSync(rawUpstreamPath, RAW_UPSTREAM_SOURCE)
})
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** Processes started by a test (ended after it, by their id) and upstream pid files to clean. */
const started: ChildProcess[] = []
const pidFiles: string[] = []
const connections: ProxyConnection[] = []
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of connections.splice(0)) await c.client.close().catch(() => {})
  for (const f of cleanups.splice(0)) await Promise.resolve(f()).catch(() => {})
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const file of pidFiles.splice(0)) {
    if (!existsSync(file)) continue
    const pid = Number(readFileSync(file, 'utf8'))
    if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL')
  }
})

let pidCounter = 0
/** A fresh pid file for an upstream started by this test. */
function pidFile(): string {
  const file = join(dir, `upstream-${++pidCounter}.pid`)
  pidFiles.push(file)
  return file
}
/** The raw upstream's command line. */
const rawUpstream = (body: string, pid?: string) => [process.execPath, rawUpstreamPath, body, ...(pid ? [pid] : [])]

/** Polls `check` every 50 ms for up to `ms`; resolves with whether it became true. */
async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (check()) return true
  return check()
}

async function pidIn(file: string): Promise<number> {
  expect(await eventually(() => existsSync(file) && readFileSync(file, 'utf8').length > 0, 10_000)).toBe(true)
  return Number(readFileSync(file, 'utf8'))
}

const INIT_PARAMS = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-client', version: '1' } }

/** The proxy on raw stdio: every line it writes to stdout is parsed (`notJson` keeps those that are not JSON). */
function rawProxy(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  started.push(child)
  const lines: any[] = []
  const notJson: string[] = []
  let stderr = ''
  readLines(child.stdout, (line) => {
    try {
      lines.push(JSON.parse(line))
    } catch {
      notJson.push(line)
    }
  })
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8')
  })
  child.stdin.on('error', () => {})
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const answer = (id: unknown) => lines.find((l) => l.id === id && !('method' in l))
  return {
    child,
    lines,
    notJson,
    exited,
    stderr: () => stderr,
    answer,
    write: (text: string) => child.stdin.write(text),
    send: (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`),
    /** Sends initialize (with `protocolVersion`) and initialized; resolves with the initialize answer. */
    async initialize(protocolVersion = '2025-06-18') {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { ...INIT_PARAMS, protocolVersion } })}\n`)
      expect(await eventually(() => answer('init') !== undefined, 15_000), `no answer to initialize; stderr: ${stderr}`).toBe(true)
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
      return answer('init')
    },
  }
}

/** Starts `mcp --listen 127.0.0.1:0 ...` and resolves with its URL. */
async function listening(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'mcp', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  started.push(child)
  let seen = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      seen += d.toString('utf8')
      const match = /listening on (http:\/\/\S+)/.exec(seen)
      if (match) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`the listener exited with ${code}: ${seen}`)))
  })
  return { url, child }
}

/** An upstream `Transport` in memory that answers every request after initialize with `answer(request)`'s result. */
function memoryUpstream(answer: (request: any) => unknown) {
  const transport: any = {
    async start() {},
    async close() {
      transport.onclose?.()
    },
    async send(message: any) {
      if (message.id === undefined || !message.method) return
      const result =
        message.method === 'initialize'
          ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'memory-upstream', version: '1' } }
          : answer(message)
      queueMicrotask(() => transport.onmessage?.({ jsonrpc: '2.0', id: message.id, result }))
    },
  }
  return transport
}

describe('MCP proxy under attack: the upstream side', () => {
  it('delivers a result the upstream answered just before it exited (it is not dropped while being offloaded)', async () => {
    // The upstream answers a 20 MB result, then exits with code 3 once it is written. The
    // call was answered: the client must get its (offloaded) result before the proxy
    // closes the connection and exits 3. Now the proxy closes the connection one timer
    // turn after the exit, while the result is still being stored, and the answer is lost
    // (the client sees "connection closed" for a call that succeeded).
    const body = `
      if (msg.method === 'initialize') initialize(msg)
      else if (msg.method === 'tools/call') send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'a line of the report\\n'.repeat(1_000_000) }] } }, () => process.exit(3))
    `
    const p = rawProxy(['--', ...rawUpstream(body)])
    await p.initialize()
    p.send({ id: 2, method: 'tools/call', params: { name: 'report', arguments: {} } })
    const code = await p.exited
    expect(code).toBe(3)
    const answer = p.answer(2)
    expect(answer, `no answer to the call; stderr: ${p.stderr()}`).toBeDefined()
    expect(answer.result.content[0].text).toMatch(/^\[Offloaded:/)
  }, 30_000)

  it('fails a call whose response is longer than maxMessageBytes instead of leaving it unanswered', async () => {
    // The line is skipped (and reported), but its call is never answered: without a
    // client-side timeout the client waits forever. Expected: the call is answered at once
    // with an error that says the upstream's answer was too large (the id of a skipped
    // line can be read from its end, where the SDK's servers write it).
    const proxy = createOffloadingProxy({ upstream: { command: SCRIPTED[0], args: SCRIPTED.slice(1), stderr: 'ignore' }, maxMessageBytes: 10_000, log: () => {} })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await proxy.connect(serverSide)
    const client = new Client({ name: 'attack', version: '1' })
    await client.connect(clientSide)
    cleanups.push(() => client.close())
    const outcome = await client.callTool({ name: 'text', arguments: { bytes: 50_000 } }, CallToolResultSchema, { timeout: 4000 }).then(
      () => 'answered',
      (err) => String(err?.message),
    )
    expect(outcome).not.toMatch(/Request timed out/)
    expect(outcome).toMatch(/10000 bytes|too large|too long/)
  }, 20_000)

  it('fails a call whose response is not a valid JSON-RPC message (result: null) instead of leaving it unanswered', async () => {
    // `{"jsonrpc":"2.0","id":N,"result":null}` fails the SDK's message schema, so the
    // proxy's reader drops the line and the call hangs until the client gives up. The
    // issue promises that an upstream that writes garbage gets the client "a clear
    // JSON-RPC error or isError result, never a hang".
    const body = `
      if (msg.method === 'initialize') initialize(msg)
      else if (msg.method === 'tools/call') send({ jsonrpc: '2.0', id: msg.id, result: null })
    `
    const c = await connectProxy({ upstream: rawUpstream(body) })
    connections.push(c)
    const started = Date.now()
    const outcome = await c.client.callTool({ name: 'x', arguments: {} }, CallToolResultSchema, { timeout: 5000 }).then(
      () => 'answered',
      (err) => String(err?.message),
    )
    expect(outcome).not.toMatch(/Request timed out/)
    expect(Date.now() - started).toBeLessThan(4000)
  }, 20_000)

  it('offloads huge structuredContent of a result that has no content array', async () => {
    // A result with only `structuredContent` (the SDK's schema lets `content` default to
    // []) passes through whole: here 2 MB reaches the client. The issue promises that a
    // result whose structuredContent exceeds the threshold is stored and replaced.
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}`, note: 'x'.repeat(60) }))
    const upstream = memoryUpstream((request) => (request.method === 'tools/call' ? { structuredContent: { rows } } : { tools: [] }))
    const proxy = createOffloadingProxy({ upstream, log: () => {} })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await proxy.connect(serverSide)
    const client = new Client({ name: 'attack', version: '1' })
    await client.connect(clientSide)
    cleanups.push(() => client.close())
    const result = await client.callTool({ name: 'rows', arguments: {} })
    expect(JSON.stringify(result).length).toBeLessThan(8000)
    expect(firstText(result)).toMatch(/^\[Offloaded:/)
  })

  it('says on stderr that a command that does not exist could not be started (not "exited with code null")', async () => {
    // The client gets a clear error; the log line that explains the exit names an exit
    // code that never was.
    const p = rawProxy(['--', join(dir, 'no-such-server')])
    p.send({ id: 1, method: 'initialize', params: INIT_PARAMS })
    expect(await p.exited).not.toBe(0)
    expect(p.answer(1)?.error?.message).toMatch(/could not start the upstream server/)
    expect(p.stderr()).not.toMatch(/exited with code null/)
    expect(p.stderr()).toMatch(/could not start|not found|ENOENT/)
  }, 20_000)
})

describe('MCP proxy under attack: the client side (stdio)', () => {
  it('answers a JSON-RPC batch when the session speaks 2025-03-26 (which requires servers to receive batches)', async () => {
    // The proxy relays protocol version 2025-03-26, whose servers MUST accept batches;
    // the batch is dropped without a word, and the client waits forever.
    const p = rawProxy(['--', ...SCRIPTED])
    const init = await p.initialize('2025-03-26')
    expect(init.result.protocolVersion).toBe('2025-03-26')
    p.write(
      `${JSON.stringify([
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'text', arguments: { bytes: 20 } } },
        { jsonrpc: '2.0', id: 3, method: 'ping' },
      ])}\n`,
    )
    const answered = await eventually(() => JSON.stringify(p.lines).includes('"id":2') && JSON.stringify(p.lines).includes('"id":3'), 4000)
    expect(answered, `stdout: ${JSON.stringify(p.lines).slice(0, 500)}; stderr: ${p.stderr()}`).toBe(true)
  }, 20_000)

  it('answers a line that is not JSON with a Parse error (id null) and reports it on stderr', async () => {
    // JSON-RPC 2.0: an unparseable request gets {"error":{"code":-32700},"id":null}. The
    // proxy writes nothing at all, and nothing on stderr either, although the README says
    // "A line that is not JSON-RPC is reported on stderr and skipped" (true only of the
    // upstream's lines).
    const p = rawProxy(['--', ...SCRIPTED])
    await p.initialize()
    p.write('{"jsonrpc":"2.0","id":7,"method":"tools/list"\n')
    const answered = await eventually(() => p.lines.some((l) => l.id === null && l.error?.code === -32700), 3000)
    expect(answered, `stdout: ${JSON.stringify(p.lines).slice(0, 500)}`).toBe(true)
    expect(p.stderr()).toMatch(/not JSON/)
  }, 20_000)

  it('relays the cancellation of a request whose id is 0 to the upstream', async () => {
    // The SDK's Protocol ignores `notifications/cancelled` whose requestId is falsy
    // (`if (!notification.params.requestId) return`), so a call with id 0 (or "") cannot
    // be cancelled: the upstream never hears of it and the client still gets an answer.
    // The raw upstream never answers a call; it logs each cancellation it receives.
    const body = `
      if (msg.method === 'initialize') initialize(msg)
      else if (msg.method === 'notifications/cancelled') send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'cancelled' } })
    `
    const p = rawProxy(['--', ...rawUpstream(body)])
    await p.initialize()
    p.send({ id: 5, method: 'tools/call', params: { name: 'slow', arguments: {} } })
    p.send({ id: 0, method: 'tools/call', params: { name: 'slow', arguments: {} } })
    await sleep(300)
    p.send({ method: 'notifications/cancelled', params: { requestId: 5, reason: 'user' } })
    p.send({ method: 'notifications/cancelled', params: { requestId: 0, reason: 'user' } })
    const cancelled = () => p.lines.filter((l) => l.method === 'notifications/message' && l.params?.data === 'cancelled').length
    // id 5 is cancelled upstream; id 0 must be too.
    expect(await eventually(() => cancelled() >= 2, 3000), `upstream cancellations seen: ${cancelled()}`).toBe(true)
  }, 20_000)

  it('ends the upstream when the client closes its end of stdout (EPIPE), instead of orphaning it', async () => {
    // bin/context-offloader.mjs answers EPIPE on stdout with process.exit(0), so the
    // proxy dies without closing its upstream: a server that does not exit on EOF (a
    // timer, a database pool) lives on, reparented to init. Expected: the same end as a
    // closed stdin (stdin closed, then SIGTERM, then SIGKILL).
    const pid = pidFile()
    const body = `
      if (msg.method === 'initialize') { initialize(msg); setInterval(() => {}, 1000) }
      else if (msg.method === 'tools/call') {
        for (let i = 0; i < 50; i++) send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(2000) } })
        send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'done' }] } })
      }
    `
    const p = rawProxy(['--', ...rawUpstream(body, pid)])
    await p.initialize()
    const upstreamPid = await pidIn(pid)
    p.child.stdout.destroy()
    p.send({ id: 2, method: 'tools/call', params: { name: 'chatty', arguments: {} } })
    await p.exited
    // The proxy's own grace periods are 2 s (stdin) and 2 s (SIGTERM).
    expect(await eventually(() => !alive(upstreamPid), 6000), `upstream ${upstreamPid} still running after the proxy exited`).toBe(true)
  }, 20_000)
})

describe('MCP proxy under attack: the command line', () => {
  it('refuses a --store that cannot hold anything, and names the flag of every bad value', async () => {
    // A --store that is a file starts the proxy anyway: every large result then fails to
    // be stored and is relayed whole (the very thing the proxy exists to prevent), with a
    // multi-line error object on stderr per call. Expected: exit 2 and one line naming
    // --store before anything is served. Other bad values are refused, but with messages
    // that name an internal option instead of the flag.
    const file = join(dir, 'a-file')
    writeFileSync(file, 'not a directory\n')
    // (Soft assertions: every case is reported.)
    expectOneLineError(await cli(['mcp', '--store', file, '--', ...SCRIPTED]), expect.soft, /--store/)
    expectOneLineError(await cli(['mcp', '--store', join(file, 'below'), '--', ...SCRIPTED]), expect.soft, /--store/)
    expectOneLineError(await cli(['mcp', '--store', '', '--', ...SCRIPTED]), expect.soft, /--store/)
    expectOneLineError(await cli(['mcp', '--ttl', '99999999999999999999', '--', ...SCRIPTED]), expect.soft, /--ttl/)
  }, 30_000)
})

describe('MCP proxy under attack: HTTP and remote upstreams', () => {
  it('--listen: a session whose initialize failed does not keep its upstream running', async () => {
    // The upstream refuses initialize. The official client gives up (connect() throws) and
    // never sends DELETE (it has no usable session); the proxy keeps the session and its
    // upstream process until the proxy exits. Expected: a session whose initialize failed
    // is closed with its upstream, as a stdio client closing the proxy would.
    const pid = pidFile()
    const body = `
      if (msg.method === 'initialize') send({ jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: 'unsupported client' } })
    `
    const { url } = await listening(['--', ...rawUpstream(body, pid)])
    const client = new Client({ name: 'attack', version: '1' })
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow(/unsupported client/)
    await client.close().catch(() => {})
    const upstreamPid = await pidIn(pid)
    expect(await eventually(() => !alive(upstreamPid), 6000), `upstream ${upstreamPid} of the failed session is still running`).toBe(true)
  }, 30_000)

  it('--url: the proxy ends its upstream session (DELETE) when its client goes', async () => {
    // A chain: client -> proxy A (stdio, --url) -> proxy B (--listen) -> scripted server.
    // When the client closes A, A closes its StreamableHTTPClientTransport but never sends
    // DELETE, so B keeps the session and its upstream process for ever. Expected: A
    // terminates its upstream session (the MCP spec asks clients to DELETE sessions they
    // no longer need), and B then ends its scripted server.
    const { url } = await listening(['--', ...SCRIPTED])
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--url', url], stderr: 'pipe' })
    const client = new Client({ name: 'attack', version: '1' })
    await client.connect(transport)
    const proxyA = (transport as any)._process as ChildProcess
    started.push(proxyA)
    const upstreamPid = Number(firstText(await client.callTool({ name: 'pid', arguments: {} })))
    expect(alive(upstreamPid)).toBe(true)
    const exited = new Promise((resolve) => proxyA.once('exit', resolve))
    await client.close()
    await exited
    const ended = await eventually(() => !alive(upstreamPid), 6000)
    if (!ended) process.kill(upstreamPid, 'SIGKILL')
    expect(ended, `the upstream behind the --url server (${upstreamPid}) still runs after the client went`).toBe(true)
  }, 30_000)

  it('--listen: what a closed session stored (opaque references, now unreachable) does not stay in memory', async () => {
    // Every session's proxy shares the one store; its references are opaque and scoped to
    // the session, so once the session is deleted nobody can read what it stored. With the
    // default store (memory, no --max-bytes, no TTL) a long-running listener keeps every
    // closed session's results for ever. Expected: a session's artifacts go with it (or
    // the listener bounds the store by default).
    const storage = new InMemoryStorage({ evictAfterTurns: null })
    const served = await listenHttp({
      host: '127.0.0.1',
      port: 0,
      createProxy: () => createOffloadingProxy({ upstream: { command: SCRIPTED[0], args: SCRIPTED.slice(1), stderr: 'ignore' }, storage, log: () => {} }),
      log: () => {},
    })
    cleanups.push(() => served.close())
    const transport = new StreamableHTTPClientTransport(new URL(served.url))
    const client = new Client({ name: 'attack', version: '1' })
    await client.connect(transport)
    const upstreamPid = Number(firstText(await client.callTool({ name: 'pid', arguments: {} })))
    const big = await client.callTool({ name: 'text', arguments: { bytes: 200_000 } })
    expect(firstText(big)).toMatch(/^\[Offloaded:/)
    expect(storage.size).toBeGreaterThan(0)
    await transport.terminateSession()
    await client.close()
    expect(await eventually(() => served.sessions.size === 0 && !alive(upstreamPid), 6000)).toBe(true)
    expect(await eventually(() => storage.size === 0, 2000), `${storage.size} artifacts of a deleted session are still held`).toBe(true)
  }, 30_000)
})
