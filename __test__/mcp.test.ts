// The MCP proxy (`context-offloader mcp`) between the official SDK client and real
// servers: the reference filesystem and "everything" servers from npm, and a scripted
// server for what those cannot do (huge texts and structured content, errors, a crash
// mid-call, a hang, slow progress, garbage on stdout).
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtempSync, readdirSync, writeFileSync, rmSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  CallToolResultSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { spawn } from 'node:child_process'
import { CLI, cli, expectOneLineError } from './helpers/cli'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { alive, connectProxy, SCRIPTED, EVERYTHING, FILESYSTEM, firstText, readLines, referencesOf, type ProxyConnection } from './helpers/mcp-kit'
import { numberedText } from './fixtures/mcp/text.mjs'

const open: ProxyConnection[] = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.client.close().catch(() => {})
})
async function proxy(options: Parameters<typeof connectProxy>[0] = {}) {
  const c = await connectProxy(options)
  open.push(c)
  return c
}
const retrieve = (c: ProxyConnection, args: Record<string, unknown>) => c.client.callTool({ name: 'retrieve_offloaded_content', arguments: args })

describe('MCP proxy: the scripted server', () => {
  it('passes a small result through unchanged and offloads a large one, readable through the retrieval tool', async () => {
    const c = await proxy()
    expect(c.client.getServerVersion()).toEqual({ name: 'scripted', version: '1.0.0' })
    expect(c.client.getInstructions()).toBe('A scripted server for tests.')
    const small = await c.client.callTool({ name: 'text', arguments: { bytes: 200 } })
    expect(small).toEqual({ content: [{ type: 'text', text: numberedText(200) }] })

    const big = await c.client.callTool({ name: 'text', arguments: { bytes: 2_000_000 } })
    const text = firstText(big)
    expect(JSON.stringify(big).length).toBeLessThan(8000)
    expect(text).toMatch(/^\[Offloaded: 1 blocks?, [\d,~]+ tokens\]/)
    const [ref] = referencesOf(text)
    expect(ref).toMatch(/^ref_/)
    const found = firstText(await retrieve(c, { reference: ref, pattern: 'line 12345:' }))
    expect(found).toContain('line 12345: lorem ipsum dolor sit amet')
    const range = firstText(await retrieve(c, { reference: ref, line_range: { start: 20000, end: 20001 } }))
    expect(range).toContain('line 20000: lorem')
    expect(range).toContain('line 20001: lorem')
    const missing = await retrieve(c, { reference: 'ref_doesnotexist00' })
    expect(missing.isError).toBe(true)
    expect(firstText(missing)).toMatch(/^Error: reference not found: ref_doesnotexist00$/)
  })

  it('lists the retrieval tool (extended), and drops outputSchema from tools that may be offloaded', async () => {
    const c = await proxy({ flags: ['--never-offload', 'env'] })
    const { tools } = await c.client.listTools()
    const names = tools.map((t) => t.name)
    expect(names.at(-1)).toBe('retrieve_offloaded_content')
    expect(names.filter((n) => n === 'retrieve_offloaded_content')).toHaveLength(1)
    const retrieval = tools.at(-1)!
    expect(Object.keys(retrieval.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['reference', 'pattern', 'line_range', 'query', 'page', 'list']))
    expect(retrieval.annotations?.readOnlyHint).toBe(true)
    const structured = tools.find((t) => t.name === 'structured')!
    expect(structured.outputSchema).toBeUndefined()
    expect(structured.inputSchema).toEqual({ type: 'object', properties: { items: { type: 'number' }, textToo: { type: 'boolean' } } })
  })

  it('offloads huge structuredContent as JSON (jq-queryable) and the official client accepts the result', async () => {
    const c = await proxy()
    await c.client.listTools() // the client caches output schemas: none is shown for this tool
    const result = await c.client.callTool({ name: 'structured', arguments: { items: 50_000 } })
    expect(result.structuredContent).toBeUndefined()
    const text = firstText(result)
    expect(JSON.stringify(result).length).toBeLessThan(8000)
    // The text repeats the structured content: stored once.
    const refs = referencesOf(text)
    expect(refs).toHaveLength(1)
    const answer = firstText(await retrieve(c, { reference: refs[0], query: '.items[41234].name' }))
    expect(answer).toContain('item 41234')

    // structuredContent alone (no text item) is stored as JSON too.
    const only = await c.client.callTool({ name: 'structured', arguments: { items: 20_000, textToo: false } })
    const [ref] = referencesOf(firstText(only))
    expect(firstText(await retrieve(c, { reference: ref, query: '[.items[] | select(.score == 96)] | length' }))).toMatch(/\b206\b/)

    // A small structured result passes with its structuredContent.
    const small = await c.client.callTool({ name: 'structured', arguments: { items: 2 } })
    expect(small.structuredContent).toEqual({ items: [expect.objectContaining({ id: 0 }), expect.objectContaining({ id: 1 })] })
  })

  it('leaves error results alone unless --offload-errors', async () => {
    const plain = await proxy()
    const error = await plain.client.callTool({ name: 'fail', arguments: { bytes: 100_000 } })
    expect(error.isError).toBe(true)
    expect(firstText(error)).toBe(numberedText(100_000, 'error'))

    const offloading = await proxy({ flags: ['--offload-errors'] })
    const offloaded = await offloading.client.callTool({ name: 'fail', arguments: { bytes: 100_000 } })
    expect(offloaded.isError).toBe(true)
    expect(firstText(offloaded)).toMatch(/^\[Offloaded:/)
  })

  it('offloads an embedded text resource, keeps media and links unless --offload-media', async () => {
    const c = await proxy()
    const resource = await c.client.callTool({ name: 'resource', arguments: { bytes: 200_000 } })
    expect(firstText(resource)).toMatch(/^\[Offloaded:/)
    const media = await c.client.callTool({ name: 'media', arguments: { bytes: 300_000, textBytes: 100_000 } })
    const types = (media.content as any[]).map((i) => i.type)
    expect(types).toEqual(['text', 'image', 'audio', 'resource_link'])
    expect(firstText(media)).toMatch(/^\[Offloaded:/)
    expect((media.content as any[])[1].data).toBe(Buffer.alloc(300_000, 7).toString('base64'))

    const off = await proxy({ flags: ['--offload-media'] })
    const stored = await off.client.callTool({ name: 'media', arguments: { bytes: 300_000, textBytes: 100 } })
    const kinds = (stored.content as any[]).map((i) => i.type)
    expect(kinds).not.toContain('image')
    expect(kinds).not.toContain('audio')
    expect(kinds.at(-1)).toBe('resource_link')
    expect(JSON.stringify(stored).length).toBeLessThan(8000)
    expect(referencesOf(firstText(stored)).length).toBeGreaterThanOrEqual(2)
  })

  it('passes progress with the client’s own token, every notification before the result', async () => {
    const c = await proxy()
    const seen: string[] = []
    const result = await c.client.callTool({ name: 'progress', arguments: { steps: 5, delayMs: 30, bytes: 300_000 } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(`progress ${p.progress}/${p.total}`),
    })
    seen.push('result')
    expect(seen).toEqual(['progress 1/5', 'progress 2/5', 'progress 3/5', 'progress 4/5', 'progress 5/5', 'result'])
    expect(firstText(result)).toMatch(/^\[Offloaded:/)
  })

  it('relays sampling and log messages, survives a garbage line, and inherits the environment', async () => {
    const logs: unknown[] = []
    const c = await proxy({
      capabilities: { sampling: {} },
      env: { OFFLOADER_TEST_API_KEY: 'secret-123' },
      setup: (client) => {
        client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'from the client' }, model: 'test' }))
        client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
          logs.push(n.params.data)
        })
      },
    })
    expect(firstText(await c.client.callTool({ name: 'sample', arguments: {} }))).toBe('sampled: from the client')
    expect(firstText(await c.client.callTool({ name: 'log', arguments: { count: 3 } }))).toBe('logged')
    expect(logs).toEqual(['log 0', 'log 1', 'log 2'])
    expect(firstText(await c.client.callTool({ name: 'garbage', arguments: {} }))).toBe('answered after garbage')
    expect(c.stderr()).toMatch(/not a JSON-RPC message \(not JSON\): "this is not json"/)
    expect(firstText(await c.client.callTool({ name: 'env', arguments: { name: 'OFFLOADER_TEST_API_KEY' } }))).toBe('secret-123')
    await c.client.ping()
  })

  it('answers 100 concurrent calls correctly, large and small, in any order', async () => {
    const c = await proxy()
    const calls = Array.from({ length: 100 }, (_, i) => {
      const bytes = i % 4 === 0 ? 150_000 + i : 50 + i
      return c.client.callTool({ name: 'text', arguments: { bytes, word: `w${i}` } }).then((r) => ({ i, bytes, r }))
    })
    const results = await Promise.all(calls)
    const refs = new Set<string>()
    for (const { i, bytes, r } of results) {
      const text = firstText(r)
      if (bytes < 1000) expect(text).toBe(numberedText(bytes, `w${i}`))
      else {
        expect(text).toMatch(/^\[Offloaded:/)
        expect(text).toContain(`w${i} ipsum`)
        const [ref] = referencesOf(text)
        refs.add(ref)
        const last = numberedText(bytes, `w${i}`).trimEnd().split('\n').at(-2)!
        expect(firstText(await retrieve(c, { reference: ref, pattern: last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') }))).toContain(last)
      }
    }
    expect(refs.size).toBe(25)
  })

  it('relays a 100 MB result (the SDK reader stops at 10 MiB) as a preview', async () => {
    const c = await proxy()
    const result = await c.client.callTool({ name: 'text', arguments: { bytes: 100_000_000 } }, CallToolResultSchema, { timeout: 120_000 })
    expect(JSON.stringify(result).length).toBeLessThan(8000)
    const [ref] = referencesOf(firstText(result))
    const tail = firstText(await retrieve(c, { reference: ref, pattern: 'line 1000000:' }))
    expect(tail).toContain('line 1000000: lorem')
  }, 150_000)

  it('answers a call cut short by a crash with an error naming the exit, then exits non-zero', async () => {
    const c = await proxy()
    const pending = c.client.callTool({ name: 'hang', arguments: {} }).then(
      () => 'answered',
      (err) => String(err?.message),
    )
    const crash = c.client.callTool({ name: 'crash', arguments: { code: 3, afterMs: 100 } })
    await expect(crash).rejects.toThrow(/^MCP error -32000: the upstream server exited with code 3 during tools\/call$/)
    expect(await pending).toMatch(/^MCP error -32000: the upstream server exited with code 3 during tools\/call$/)
    expect(await c.exited).toBe(3)
    expect(c.stderr()).toMatch(/the upstream server exited with code 3/)
  })

  it('a hung call: --timeout answers it with an error; a cancel from the client reaches the upstream', async () => {
    const c = await proxy({ flags: ['--timeout', '1s'] })
    const started = Date.now()
    await expect(c.client.callTool({ name: 'hang', arguments: {} })).rejects.toThrow(/did not answer tools\/call within 1000 ms/)
    expect(Date.now() - started).toBeLessThan(10_000)
    // The proxy still works.
    expect(firstText(await c.client.callTool({ name: 'text', arguments: { bytes: 20 } }))).toBe(numberedText(20))

    const d = await proxy()
    const controller = new AbortController()
    const call = d.client.callTool({ name: 'hang', arguments: {} }, CallToolResultSchema, { signal: controller.signal })
    setTimeout(() => controller.abort('stop'), 200)
    await expect(call).rejects.toThrow()
    expect(firstText(await d.client.callTool({ name: 'text', arguments: { bytes: 20 } }))).toBe(numberedText(20))
  })

  it('a closed stdin ends the upstream and the proxy cleanly; so does SIGTERM', async () => {
    for (const how of ['stdin', 'SIGTERM'] as const) {
      const c = await proxy()
      const upstreamPid = Number(firstText(await c.client.callTool({ name: 'pid', arguments: {} })))
      expect(alive(upstreamPid)).toBe(true)
      const child = (c.transport as any)._process
      if (how === 'stdin') child.stdin.end()
      else child.kill('SIGTERM')
      expect(await c.exited).toBe(0)
      for (let i = 0; i < 50 && alive(upstreamPid); i++) await new Promise((r) => setTimeout(r, 100))
      expect(alive(upstreamPid)).toBe(false)
    }
  })

  it('opaque references are scoped to the MCP session; --references paths gives storage references', async () => {
    const a = await proxy()
    const b = await proxy()
    const [ref] = referencesOf(firstText(await a.client.callTool({ name: 'text', arguments: { bytes: 50_000 } })))
    expect(firstText(await retrieve(b, { reference: ref }))).toBe(`Error: reference not found: ${ref}`)

    const dir = mkdtempSync(join(tmpdir(), 'mcp-store-'))
    try {
      const p = await proxy({ flags: ['--store', dir, '--references', 'paths'] })
      const [path] = referencesOf(firstText(await p.client.callTool({ name: 'text', arguments: { bytes: 50_000 } })))
      expect(path.startsWith(realpathSync(dir)) || path.startsWith(dir)).toBe(true)
      expect(firstText(await retrieve(p, { reference: path, pattern: 'line 7:' }))).toContain('line 7: lorem')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('two proxies on one --store directory at once: each reads its own results, and a closing session removes only its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-shared-'))
    try {
      const [a, b] = await Promise.all([proxy({ flags: ['--store', dir] }), proxy({ flags: ['--store', dir] })])
      const offload = (c: ProxyConnection, word: string) =>
        Promise.all([1, 2, 3].map((i) => c.client.callTool({ name: 'text', arguments: { bytes: 60_000 + i, word: `${word}${i}` } }).then((r) => referencesOf(firstText(r))[0])))
      const [refsA, refsB] = await Promise.all([offload(a, 'alpha'), offload(b, 'beta')])
      for (const [c, refs, word] of [[a, refsA, 'alpha'], [b, refsB, 'beta']] as const) {
        for (const [i, ref] of refs.entries()) expect(firstText(await retrieve(c, { reference: ref, pattern: 'line 500:' }))).toContain(`line 500: ${word}${i + 1} ipsum`)
      }
      const files = () => readdirSync(dir).filter((f) => /^\d+_\d+_/.test(f))
      expect(files()).toHaveLength(6)
      await a.client.close()
      await a.exited
      // A's results are gone with its session (nothing could read them); B's are all there.
      expect(files()).toHaveLength(3)
      for (const [i, ref] of refsB.entries()) expect(firstText(await retrieve(b, { reference: ref, pattern: 'line 700:' }))).toContain(`line 700: beta${i + 1} ipsum`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('honours --max-result-tokens, --preview-tokens and --tokenizer', async () => {
    const c = await proxy({ flags: ['--max-result-tokens', '100', '--preview-tokens', '20', '--tokenizer', 'heuristic'] })
    const r = await c.client.callTool({ name: 'text', arguments: { bytes: 600 } })
    expect(firstText(r)).toMatch(/^\[Offloaded: 1 blocks?, ~150 tokens\]/)
    const kept = await c.client.callTool({ name: 'text', arguments: { bytes: 400 } })
    expect(firstText(kept)).toBe(numberedText(400))
  })
})

/** The proxy driven over raw stdio: every line it writes, parsed (a line that is not JSON-RPC fails the test). */
async function rawSession(messages: object[], until: (lines: any[]) => boolean, flags: string[] = [], upstream: string[] = SCRIPTED) {
  const child = spawn(process.execPath, [CLI, 'mcp', ...flags, ...(upstream.length > 0 ? ['--', ...upstream] : [])], { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: any[] = []
  let stdout!: { rest: () => string }
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; got ${JSON.stringify(lines).slice(0, 2000)}`)), 30_000)
    stdout = readLines(
      child.stdout,
      (line) => {
        const parsed = JSON.parse(line)
        expect(parsed.jsonrpc).toBe('2.0')
        lines.push(parsed)
      },
      () => {
        if (until(lines)) {
          clearTimeout(timer)
          resolve()
        }
      },
    )
  })
  child.stderr.resume()
  for (const m of messages) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`)
  try {
    await done
  } finally {
    child.stdin.end()
  }
  const code = await new Promise((resolve) => child.once('exit', resolve))
  return { lines, code, rest: stdout.rest() }
}

const INIT = [
  { id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
  { method: 'notifications/initialized' },
]

describe('MCP proxy: on the wire', () => {
  it('progress keeps the client’s own (string) token, and every notification precedes the result; stdout is only protocol', async () => {
    const { lines, code, rest } = await rawSession(
      [
        ...INIT,
        { id: 'call-1', method: 'tools/call', params: { name: 'progress', arguments: { steps: 6, delayMs: 5, bytes: 50 }, _meta: { progressToken: 'tok-1' } } },
        { id: 2, method: 'tools/call', params: { name: 'garbage', arguments: {} } },
      ],
      (lines) => lines.some((l) => l.id === 'call-1' && l.result) && lines.some((l) => l.id === 2),
    )
    const call = lines.filter((l) => l.params?.progressToken === 'tok-1' || l.id === 'call-1')
    expect(call.map((l) => (l.id === 'call-1' ? 'result' : `progress ${l.params.progress}`))).toEqual([
      'progress 1',
      'progress 2',
      'progress 3',
      'progress 4',
      'progress 5',
      'progress 6',
      'result',
    ])
    expect(lines.find((l) => l.id === 0).result.serverInfo).toEqual({ name: 'scripted', version: '1.0.0' })
    // The protocol version the client asked for is what the upstream saw and answered.
    expect(lines.find((l) => l.id === 0).result.protocolVersion).toBe('2025-06-18')
    expect(lines.find((l) => l.id === 2).result.content[0].text).toBe('answered after garbage')
    expect(rest).toBe('')
    expect(code).toBe(0)
  })

  it('a client that closes stdin right after its requests still gets every answer, then the proxy exits 0', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp', '--', ...SCRIPTED], { stdio: ['pipe', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')))
    for (const m of [...INIT, { id: 1, method: 'tools/call', params: { name: 'text', arguments: { bytes: 30 } } }, { id: 2, method: 'tools/call', params: { name: 'text', arguments: { bytes: 200_000 } } }]) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`)
    }
    child.stdin.end()
    const code = await new Promise((resolve) => child.once('exit', resolve))
    const lines = out.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines.map((l) => l.id)).toEqual([0, 1, 2])
    expect(lines[1].result.content[0].text).toBe(numberedText(30))
    expect(lines[2].result.content[0].text).toMatch(/^\[Offloaded:/)
    expect(code).toBe(0)
  })

  it('answers requests before initialize with an error, and a second initialize with an error', async () => {
    const { lines } = await rawSession(
      [{ id: 1, method: 'tools/list' }, ...INIT, { id: 2, method: 'initialize', params: INIT[0].params }, { id: 3, method: 'tools/list' }],
      (lines) => lines.some((l) => l.id === 3),
    )
    expect(lines.find((l) => l.id === 1).error.message).toMatch(/before initialize/)
    expect(lines.find((l) => l.id === 2).error.message).toMatch(/already received/)
    expect(lines.find((l) => l.id === 3).result.tools.length).toBeGreaterThan(5)
  })
})

describe('MCP proxy: the reference servers from npm', () => {
  it('server-filesystem: a large file read is offloaded, small reads and errors pass, outputSchema is dropped', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-fs-')))
    try {
      writeFileSync(join(dir, 'big.log'), numberedText(3_000_000, 'fs'))
      writeFileSync(join(dir, 'small.txt'), 'hello\n')
      const c = await proxy({ upstream: [...FILESYSTEM, dir] })
      const { tools } = await c.client.listTools()
      expect(tools.find((t) => t.name === 'read_text_file')?.outputSchema).toBeUndefined()
      expect(tools.every((t) => t.name === 'retrieve_offloaded_content' || t.outputSchema === undefined)).toBe(true)

      const big = await c.client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'big.log') } })
      expect(JSON.stringify(big).length).toBeLessThan(8000)
      const refs = referencesOf(firstText(big))
      expect(refs).toHaveLength(1) // the file's text and its structuredContent copy: stored once
      expect(firstText(await retrieve(c, { reference: refs[0], pattern: 'line 31000:' }))).toContain('line 31000: fs ipsum')

      const small = await c.client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'small.txt') } })
      expect(small.content).toEqual([{ type: 'text', text: 'hello\n' }])
      expect(small.structuredContent).toEqual({ content: 'hello\n' })

      const denied = await c.client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } })
      expect(denied.isError).toBe(true)
      expect(firstText(denied)).toMatch(/Access denied/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('server-everything: initialize, capability-conditional tools, roots, sampling, elicitation, progress, prompts, resources, completion, logging', async () => {
    let rootsAsked = 0
    const logs: unknown[] = []
    const c = await proxy({
      upstream: EVERYTHING,
      capabilities: { sampling: {}, roots: { listChanged: true }, elicitation: { form: {} } },
      env: { OFFLOADER_TEST_API_KEY: 'key-everything' },
      setup: (client) => {
        client.setRequestHandler(ListRootsRequestSchema, async () => {
          rootsAsked++
          return { roots: [{ uri: 'file:///tmp', name: 'tmp' }] }
        })
        client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'sampled by the client' }, model: 'test' }))
        client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }))
        client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
          logs.push(n.params)
        })
      },
    })
    expect(c.client.getServerVersion()).toMatchObject({ name: 'mcp-servers/everything' })
    expect(c.client.getInstructions()).toBeTruthy()
    const caps = c.client.getServerCapabilities()!
    expect(caps).toMatchObject({ tools: {}, prompts: {}, resources: {}, logging: {}, completions: {} })
    expect(caps.tasks).toBeDefined()
    const names = (await c.client.listTools()).tools.map((t) => t.name)
    // Offered only to a client with these capabilities: the upstream saw the client's own.
    expect(names).toEqual(expect.arrayContaining(['get-roots-list', 'trigger-sampling-request', 'trigger-elicitation-request', 'echo', 'retrieve_offloaded_content']))
    for (let i = 0; i < 30 && rootsAsked === 0; i++) await new Promise((r) => setTimeout(r, 100))
    expect(rootsAsked).toBeGreaterThan(0)

    const sampled = await c.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 10 } })
    expect(JSON.stringify(sampled.content)).toContain('sampled by the client')
    const elicited = await c.client.callTool({ name: 'trigger-elicitation-request', arguments: {} })
    expect(JSON.stringify(elicited.content)).toContain('Ada')

    const progress: number[] = []
    const long = await c.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p.progress),
    })
    // (The official client takes a notification a microtask after reading it but a result at
    // once, so it may drop the last progress read in one chunk with the result: the order on
    // the wire is checked above, with a raw reader.)
    expect(progress.slice(0, 3)).toEqual([1, 2, 3])
    expect(firstText(long)).toMatch(/Long running operation completed/)

    const env = JSON.parse(firstText(await c.client.callTool({ name: 'get-env', arguments: {} })))
    expect(env.OFFLOADER_TEST_API_KEY).toBe('key-everything')

    const echo = await c.client.callTool({ name: 'echo', arguments: { message: 'x'.repeat(40_000) } })
    expect(firstText(echo)).toMatch(/^\[Offloaded:/)
    const structured = await c.client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } })
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) })

    const prompts = await c.client.listPrompts()
    expect(prompts.prompts.length).toBeGreaterThan(0)
    const prompt = await c.client.getPrompt({ name: prompts.prompts[0].name, arguments: {} }).catch((e) => e)
    expect(prompt).toBeDefined()
    const resources = await c.client.listResources()
    expect(resources.resources.length).toBeGreaterThan(0)
    const read = await c.client.readResource({ uri: resources.resources[0].uri })
    expect(read.contents.length).toBeGreaterThan(0)
    const templates = await c.client.listResourceTemplates()
    expect(templates.resourceTemplates.length).toBeGreaterThan(0)
    await c.client.setLoggingLevel('debug')
    await c.client.ping()
    const completion = await c.client
      .complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'En' } })
      .catch((e) => e)
    expect(completion).toBeDefined()
  })
})

describe('MCP proxy: the command line', () => {
  it('refuses bad options with one line naming the flag, exit 2, before starting anything', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /no upstream server: give its command after --/],
      [['--url', 'ftp://host/mcp'], /--url: expected an http\(s\) URL/],
      [['--url', 'http://127.0.0.1:9/mcp', '--', 'node', 'x.js'], /either --url or a command after --, not both/],
      [['--ttl', '0', '--', 'node'], /--ttl: expected a positive number of seconds/],
      [['--ttl', 'soon', '--', 'node'], /--ttl/],
      [['--max-bytes', '0', '--', 'node'], /--max-bytes: expected a size above 0/],
      [['--max-bytes', 'lots', '--', 'node'], /--max-bytes/],
      [['--store', 's3://bucket-a/p', '--max-bytes', '1G', '--', 'node'], /--max-bytes: an S3 store has no byte budget/],
      [['--preview-tokens', '3000', '--', 'node'], /--preview-tokens \(3000\) must be below --max-result-tokens \(2500, the default\)/],
      [['--max-result-tokens', '500', '--', 'node'], /--preview-tokens \(1000, the default\) must be below --max-result-tokens \(500\)/],
      [['--max-result-tokens', '1.5', '--', 'node'], /--max-result-tokens: expected a positive whole number/],
      [['--preview', 'tail', '--', 'node'], /--preview: expected head, headTail, structure; got 'tail'/],
      [['--tokenizer', 'model', '--', 'node'], /--tokenizer: expected o200k_base, cl100k_base, heuristic; got 'model'/],
      [['--references', 'ids', '--', 'node'], /--references: expected opaque, paths/],
      [['--listen', 'localhost', '--', 'node'], /--listen: expected host:port/],
      [['--listen', '127.0.0.1:70000', '--', 'node'], /--listen: expected host:port/],
      [['--timeout', 'never', '--', 'node'], /--timeout/],
      [['--bogus', '--', 'node'], /mcp: Unknown option '--bogus'/],
    ]
    const runs = await Promise.all(cases.map(([args]) => cli(['mcp', ...args])))
    runs.forEach((run, i) => {
      expectOneLineError(run, expect, cases[i][1])
      expect(run.stdout).toBe('')
    })
  })

  it('--help lists every flag on stdout', async () => {
    const run = await cli(['mcp', '--help'])
    expect(run.code).toBe(0)
    for (const flag of ['--url', '--listen', '--store', '--max-bytes', '--ttl', '--max-result-tokens', '--preview-tokens', '--preview', '--tokenizer', '--references', '--never-offload', '--offload-errors', '--offload-media', '--timeout']) {
      expect(run.stdout).toContain(flag)
    }
  })

  it('an upstream command that cannot start: initialize fails with an error naming it, and the proxy exits non-zero', async () => {
    const { lines, code } = await rawSession(INIT, (lines) => lines.some((l) => l.id === 0), [], ['/no/such/mcp-server'])
    expect(lines.find((l) => l.id === 0).error.message).toMatch(/^could not start the upstream server '\/no\/such\/mcp-server': spawn \/no\/such\/mcp-server ENOENT$/)
    expect(code).toBe(1)
  })

  it('an upstream command that cannot start, and a client that closes stdin right after initialize: still answered, still non-zero', async () => {
    // The client's close must not pass for the end of the session when the upstream had
    // gone first (it was read as a clean end, exit 0, when it came before the proxy's
    // next timer tick).
    for (let attempt = 0; attempt < 3; attempt++) {
      const child = spawn(process.execPath, [CLI, 'mcp', '--', '/no/such/mcp-server'], { stdio: ['pipe', 'pipe', 'pipe'] })
      child.stderr.resume()
      let out = ''
      child.stdout.on('data', (data) => (out += data))
      for (const m of INIT) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`)
      child.stdin.end()
      const code = await new Promise((resolve) => child.once('exit', resolve))
      const answers = out.split('\n').filter(Boolean).map((line) => JSON.parse(line))
      expect(answers.find((a) => a.id === 0)?.error?.message, out).toMatch(/^could not start the upstream server '\/no\/such\/mcp-server'/)
      expect(code, `attempt ${attempt}`).toBe(1)
    }
  })
})

describe('MCP proxy: the command line, remote upstreams', () => {
  it('--header reaches the --url server; an unreachable --url fails initialize naming it; S3 flags need an S3 store; a busy --listen port is named', async () => {
    // The conformance test server records nothing, so a tiny HTTP server stands in: it answers 401 without the header.
    const http = await import('node:http')
    const seen: string[] = []
    const server = http.createServer((req, res) => {
      seen.push(String(req.headers.authorization))
      res.writeHead(401).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as any).port
    try {
      const { lines } = await rawSession(INIT, (l) => l.some((x) => x.id === 0), ['--url', `http://127.0.0.1:${port}/mcp`, '--header', 'Authorization: Bearer t0k'], []).catch(
        (e) => ({ lines: [], e }) as any,
      )
      expect(seen[0]).toBe('Bearer t0k')
      expect(lines.find((l: any) => l.id === 0)?.error).toBeDefined()
    } finally {
      server.close()
    }
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const gone = (closed.address() as any).port
    await new Promise((resolve) => closed.close(resolve))
    const refused = await rawSession(INIT, (l) => l.some((x) => x.id === 0), ['--url', `http://127.0.0.1:${gone}/mcp`], [])
    expect(refused.lines.find((l) => l.id === 0).error.message).toBe(`could not reach the upstream server at http://127.0.0.1:${gone}/mcp: fetch failed (ECONNREFUSED)`)
    const runs = await Promise.all([
      cli(['mcp', '--endpoint', 'http://127.0.0.1:3900', '--', 'node']),
      cli(['mcp', '--region', 'eu-west-1', '--store', '/tmp', '--', 'node']),
      cli(['mcp', '--header', 'A: b', '--', 'node']),
      cli(['mcp', '--url', 'http://127.0.0.1:9/mcp', '--header', 'no colon']),
    ])
    expectOneLineError(runs[0], expect, /--endpoint: only for an S3 store/)
    expectOneLineError(runs[1], expect, /--region: only for an S3 store/)
    expectOneLineError(runs[2], expect, /--header: only with --url/)
    expectOneLineError(runs[3], expect, /--header: expected 'Name: value'/)
    const busy = http.createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    try {
      const run = await cli(['mcp', '--listen', `127.0.0.1:${(busy.address() as any).port}`, '--', 'node'])
      expectOneLineError(run, expect, /--listen: cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/)
    } finally {
      busy.close()
    }
  }, 30_000)
})
