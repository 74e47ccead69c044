// The framework-neutral core (`context-offloader/core`): the offload decision, the
// replacement text and the retrieval tool's answers, held byte for byte to the Strands
// plugin's for the same content and options; its JSON Schema held to the plugin tool's;
// sessions; content parts; hostile arguments; and loading with no agent framework installed.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test, vi } from 'vitest'
import * as core from '../core.js'
import { ContextOffloader, InMemoryStorage as PluginMemoryStorage } from '../index.js'
import { prng, tempDirs, toolAnswer } from './helpers/harness.js'

const { Offloader, InMemoryStorage, FileStorage, RETRIEVAL_TOOL_NAME } = core as any
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const dir = tempDirs('co-core-')

const logLines = (n: number, seed = 1) => {
  const r = prng(seed)
  return Array.from({ length: n }, (_, i) => `${i} ${r.pick(['INFO', 'WARN', 'ERROR'])} request ${r.int(0, 1e6)} done in ${r.int(1, 900)} ms`).join('\n')
}
const records = (n: number) => ({ users: Array.from({ length: n }, (_, i) => ({ id: i, name: `user ${i}`, role: i % 40 ? 'member' : 'admin' })) })

/** The plugin and the core with the same options, each on its own fresh in-memory storage (so references are the same). */
function pair(options: Record<string, unknown> = {}) {
  const plugin = new ContextOffloader({ tokenizer: 'heuristic', ...options, storage: new PluginMemoryStorage() })
  const offloader = new Offloader({ ...options, storage: new InMemoryStorage() })
  return { plugin, offloader, tool: (plugin.getTools()[0] as any) }
}

describe('the core answers as the Strands plugin does', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['defaults', {}],
    ['extended retrieval', { retrieval: 'extended' }],
    ['a native tokenizer', { tokenizer: 'o200k_base', retrieval: 'extended' }],
    ['headTail previews', { preview: 'headTail', previewTokens: 200, maxResultTokens: 900 }],
    ['structure previews', { preview: 'structure' }],
  ]
  test.each(cases)('replacement text and retrieval answers, %s', async (_name, options) => {
    const { plugin, offloader, tool } = pair(options)
    const text = logLines(4000, 7)
    const json = records(600)
    // Listings order by time: each pair of offloads is made at one fixed time.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 0, 2, 3, 4, 5) })
    const viaPlugin: any[] = []
    const viaCore: any[] = []
    try {
      viaPlugin.push(await plugin.offload(text, { key: 'call_1' }))
      viaCore.push(await offloader.offloadResult({ toolName: 'call_1', toolCallId: 'call_1', content: text }))
      vi.setSystemTime(Date.UTC(2026, 0, 2, 3, 4, 6))
      viaPlugin.push(await plugin.offload([{ json }], { key: 'call_2' }))
      viaCore.push(await offloader.offloadResult({ toolName: 'call_2', toolCallId: 'call_2', content: json }))
    } finally {
      vi.useRealTimers()
    }
    for (let i = 0; i < 2; i++) {
      expect(viaCore[i].text).toBe(viaPlugin[i].text)
      expect(viaCore[i].references).toEqual(viaPlugin[i].references)
      expect(viaCore[i].tokens).toBe(viaPlugin[i].tokens)
      expect(viaCore[i].parts).toEqual([{ type: 'text', text: viaPlugin[i].text }])
    }
    const ref = viaCore[0].references[0].reference
    const inputs: object[] = [
      { reference: ref, pattern: 'ERROR' },
      { reference: ref, pattern: 'request 9\\d+ done', context_lines: 1 },
      { reference: ref, line_range: { start: 100, end: 140 } },
      { reference: ref, context_lines: 12 },
      { reference: ref, pattern: '(', context_lines: 0 },
      { reference: 'mem_99_nothing_0', pattern: 'x' },
    ]
    if (options.retrieval === 'extended') {
      inputs.push({ reference: ref, pattern: 'WARN', page: 2 }, { reference: ref }, { list: true })
      inputs.push({ reference: viaCore[1].references[0].reference, query: '.users[] | select(.role == "admin") | .name' })
      inputs.push({ reference: viaCore[1].references[0].reference, query: '.users[' })
    } else {
      inputs.push({ reference: ref })
    }
    // Listings show times to the second: the two sides may be a second apart.
    const timeless = (s: string) => s.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>')
    for (const input of inputs) {
      expect(timeless(await offloader.retrievalTool.execute(input)), JSON.stringify(input)).toBe(timeless(await toolAnswer(tool, input)))
    }
    // A full retrieval of JSON answers its stored text (the plugin answers it parsed).
    const small = { ok: true, items: ['a'.repeat(30), 'b'.repeat(30)] }
    const forced = await new Offloader({ ...options, shouldOffload: () => true }).offloadResult({ toolName: 't', toolCallId: 'j', content: small })
    expect(forced.references[0].contentType).toBe('application/json')
  })

  test('seeded fuzz: hostile text and JSON give the plugin’s replacement text and answers', async () => {
    const rand = prng(21)
    const pieces = ['é', '日本語', '😀', '\ud800', '\udfff', '\r\n', '\n', '\t', '\u0000', ' ', 'ERROR', 'a'.repeat(300), '"', '\\', '[]{}', '0123']
    const textOf = (n: number) => Array.from({ length: n }, () => rand.pick(pieces)).join('')
    const jsonOf = (depth: number): unknown => {
      const kind = rand.int(0, depth > 2 ? 3 : 5)
      if (kind === 0) return textOf(rand.int(0, 40))
      if (kind === 1) return rand.pick([0, -0, 1.5, 1e300, -12, 2 ** 53 + 1])
      if (kind === 2) return rand.pick([true, false, null])
      if (kind === 3) return []
      if (kind === 4) return Array.from({ length: rand.int(1, 60) }, () => jsonOf(depth + 1))
      return Object.fromEntries(Array.from({ length: rand.int(1, 12) }, () => [rand.pick(['__proto__', '', 'constructor', 'a b', textOf(3), 'id']), jsonOf(depth + 1)]))
    }
    const optionSets = [{}, { retrieval: 'extended' }, { preview: 'headTail', previewTokens: 100, maxResultTokens: 400 }, { preview: 'structure' }]
    for (let round = 0; round < 24; round++) {
      const options = optionSets[round % optionSets.length]
      const { plugin, offloader, tool } = pair({ ...options, shouldOffload: () => true })
      const content = round % 2 ? { data: jsonOf(0), text: textOf(rand.int(100, 3000)) } : textOf(rand.int(1, 20_000))
      const viaPlugin = await plugin.offload(typeof content === 'string' ? content : [{ json: content }], { key: `k${round}` })
      const viaCore = await offloader.offloadResult({ toolName: `k${round}`, toolCallId: `k${round}`, content })
      expect(viaCore.text, `round ${round}`).toBe(viaPlugin.text)
      const reference = viaCore.references[0].reference
      for (const input of [{ reference, pattern: 'ERROR', context_lines: 1 }, { reference, line_range: { start: 2, end: 40 } }, { reference, pattern: '\\d+' }]) {
        expect(await offloader.retrievalTool.execute(input), `round ${round} ${JSON.stringify(input)}`).toBe(await toolAnswer(tool, input))
      }
    }
  })

  test('a full retrieval of JSON answers its text, in SDK and in extended mode', async () => {
    const data = { ok: true, items: ['a'.repeat(30), 'b'.repeat(30)], nested: { n: 1.5, s: 'é' } }
    for (const retrieval of ['sdk', 'extended']) {
      const o = new Offloader({ retrieval, shouldOffload: () => true })
      const r = await o.offloadResult({ toolName: 't', toolCallId: 'j', content: data })
      expect(await o.retrievalTool.execute({ reference: r.references[0].reference })).toBe(JSON.stringify(data, null, 2))
    }
  })

  test('the input schema and description are the plugin tool’s, byte for byte', () => {
    for (const retrieval of ['sdk', 'extended']) {
      const plugin = new ContextOffloader({ retrieval } as any)
      const spec = (plugin.getTools()[0] as any).toolSpec
      const tool = new Offloader({ retrieval }).retrievalTool
      expect(tool.name).toBe(spec.name)
      expect(tool.name).toBe(RETRIEVAL_TOOL_NAME)
      expect(tool.description).toBe(spec.description)
      expect(JSON.stringify(tool.inputSchema)).toBe(JSON.stringify(spec.inputSchema))
    }
  })
})

describe('the offload decision', () => {
  test('the heuristic: 4 characters of text, 2 of compact JSON, per token; strictly more than maxResultTokens', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    expect(await o.offloadResult({ toolName: 't', toolCallId: 'a', content: 'x'.repeat(400) })).toBeNull()
    expect(await o.offloadResult({ toolName: 't', toolCallId: 'b', content: 'x'.repeat(401) })).not.toBeNull()
    // {"k":"..."}: 8 characters around the value.
    expect(await o.offloadResult({ toolName: 't', toolCallId: 'c', content: { k: 'y'.repeat(192) } })).toBeNull()
    const json = await o.offloadResult({ toolName: 't', toolCallId: 'd', content: { k: 'y'.repeat(193) } })
    expect(json.references[0].contentType).toBe('application/json')
    expect(json.tokens).toBe(101)
  })

  test('errors, neverOffload, the retrieval tool, shouldOffload and empty content leave the result as it is', async () => {
    const big = 'z'.repeat(20_000)
    const shouldOffload = vi.fn((call: any, result: any) => (call.name === 'forced' ? true : call.name === 'kept' ? false : call.name === 'throws' ? (() => { throw new Error('boom') })() : undefined))
    const o = new Offloader({ neverOffload: ['raw'], shouldOffload })
    expect(await o.offloadResult({ toolName: 'x', toolCallId: 'e1', content: big, isError: true })).toBeNull()
    expect(await o.offloadResult({ toolName: 'raw', toolCallId: 'n1', content: big })).toBeNull()
    expect(await o.offloadResult({ toolName: RETRIEVAL_TOOL_NAME, toolCallId: 'r1', content: big })).toBeNull()
    expect(await o.offloadResult({ toolName: 'kept', toolCallId: 'k1', content: big })).toBeNull()
    expect(await o.offloadResult({ toolName: 'x', toolCallId: 'u1', content: undefined })).toBeNull()
    expect(await o.offloadResult({ toolName: 'forced', toolCallId: 'f1', content: 'tiny' })).not.toBeNull()
    expect(await o.offloadResult({ toolName: 'throws', toolCallId: 't1', content: big })).not.toBeNull()
    expect(shouldOffload).toHaveBeenCalledWith({ name: 'forced', toolUseId: 'f1', input: undefined }, { toolUseId: 'f1', status: 'success', content: 'tiny' })
    const withErrors = new Offloader({ offloadErrors: true })
    expect(await withErrors.offloadResult({ toolName: 'x', toolCallId: 'e2', content: big, isError: true })).not.toBeNull()
    expect(o.stats().offloads).toBe(2)
  })

  test('options: the core names itself, has no model tokenizer, and knows no cycles', () => {
    expect(() => new Offloader({ tokenizer: 'model' })).toThrow(/Unknown tokenizer 'model'.*no model to ask/)
    expect(() => new Offloader({ maxResultTokens: 500 })).toThrow(/previewTokens \(default 1,000\) must be less than maxResultTokens \(500\)/)
    expect(() => new Offloader('big' as any)).toThrow(/Offloader options must be an object/)
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      new Offloader({ evictAfterCycles: 'soon', maxResultToken: 10 } as any)
      const said = warn.mock.calls.map((c) => String(c[0])).join('\n')
      expect(said).toMatch(/Offloader.*evictAfterCycles/)
      expect(said).toMatch(/maxResultToken.*maxResultTokens/)
    } finally {
      warn.mockRestore()
    }
  })
})

describe('sessions and references', () => {
  test('opaque references are read only in the session they were issued in', async () => {
    const o = new Offloader({ references: 'opaque', retrieval: 'extended' })
    const a = await o.offloadResult({ toolName: 'logs', toolCallId: 'c1', content: logLines(3000), sessionId: 'alice' })
    const own = await o.offloadResult({ toolName: 'logs', toolCallId: 'c2', content: logLines(3000, 2) })
    const ref = a.references[0].reference
    expect(ref).toMatch(/^ref_[A-Za-z0-9_-]{16}$/)
    expect(a.text).not.toContain(a.references[0].storageReference)
    const t = o.retrievalTool
    expect(await t.execute({ reference: ref, pattern: 'ERROR', context_lines: 0 }, { sessionId: 'alice' })).toMatch(/^\[\d+ matches? for \/ERROR\/\]/)
    expect(await t.execute({ reference: ref, pattern: 'ERROR' }, { sessionId: 'bob' })).toBe(`Error: reference not found: ${ref}`)
    expect(await t.execute({ reference: ref, pattern: 'ERROR' })).toBe(`Error: reference not found: ${ref}`)
    expect(await t.execute({ reference: a.references[0].storageReference }, { sessionId: 'alice' })).toMatch(/^Error: reference not found/)
    expect(await t.execute({ reference: own.references[0].reference, context_lines: 1 })).not.toMatch(/^Error/)
    const listed = await t.execute({ list: true }, { sessionId: 'alice' })
    expect(listed).toContain(ref)
    expect(listed).not.toContain(own.references[0].reference)
  })

  test('paths references on a FileStorage name the file, and are read after a restart', async () => {
    const d = dir()
    const first = new Offloader({ storage: new FileStorage(d) })
    const r = await first.offloadResult({ toolName: 'logs', toolCallId: 'call_9', content: logLines(3000) })
    const ref = r.references[0].reference
    expect(ref.startsWith(join(d, ''))).toBe(true)
    expect(existsSync(ref)).toBe(true)
    const second = new Offloader({ storage: new FileStorage(d) })
    expect(await second.retrievalTool.execute({ reference: ref, line_range: { start: 1, end: 1 } })).toContain('1| 0 ')
    expect(await second.retrievalTool.execute({ reference: join(d, '..', 'etc', 'passwd') })).toMatch(/^Error: reference not found/)
  })
})

describe('reuse: a re-sent conversation stores nothing again', () => {
  test.each(['paths', 'opaque'])('in one process and after a restart, with references: %s', async (references) => {
    const d = dir()
    const big = logLines(3000)
    const first = new Offloader({ storage: new FileStorage(d), references })
    const call = { toolName: 'logs', toolCallId: 'call_r', content: big, sessionId: 'thread-1', reuse: true }
    const a = await first.offloadResult(call)
    const files = () => readdirSync(d).filter((f) => /^\d+_\d+_/.test(f)).length
    expect(files()).toBe(1)
    expect(await first.offloadResult({ ...call })).toEqual(a)
    const restarted = new Offloader({ storage: new FileStorage(d), references })
    expect(await restarted.offloadResult({ ...call })).toEqual(a)
    expect(files()).toBe(1)
    expect(first.stats().offloads + restarted.stats().offloads).toBe(1)
    // The same id with other content, another session, or no reuse: new offloads.
    await restarted.offloadResult({ ...call, content: big + '\nmore' })
    await restarted.offloadResult({ ...call, sessionId: 'thread-2' })
    await restarted.offloadResult({ ...call, reuse: false })
    expect(files()).toBe(4)
    expect(await restarted.retrievalTool.execute({ reference: a.references[0].reference, line_range: { start: 1, end: 1 } }, { sessionId: 'thread-1' })).toMatch(/^\[Lines 1-1|^1\| /)
  })

  test('without a session: storage references are reused after a restart; opaque ids, issued in memory only, are not', async () => {
    const d = dir()
    const files = () => readdirSync(d).filter((f) => /^\d+_\d+_/.test(f)).length
    const call = { toolName: 'logs', toolCallId: 'call_n', content: logLines(3000), reuse: true }
    const a = await new Offloader({ storage: new FileStorage(d) }).offloadResult(call)
    const again = await new Offloader({ storage: new FileStorage(d) }).offloadResult(call)
    expect(again).toEqual(a)
    expect(files()).toBe(1)
    const opaque = await new Offloader({ storage: new FileStorage(d), references: 'opaque' }).offloadResult(call)
    const restarted = new Offloader({ storage: new FileStorage(d), references: 'opaque' })
    const second = await restarted.offloadResult(call)
    expect(second.references[0].reference).not.toBe(opaque.references[0].reference)
    expect(await restarted.retrievalTool.execute({ reference: second.references[0].reference, line_range: { start: 1, end: 1 } })).toMatch(/\n {2}1\| 0 /)
    expect(files()).toBe(3)
  })

  test('an expired artifact is stored again, and its record replaced', async () => {
    let now = 1_700_000_000_000
    const storage = new InMemoryStorage({ ttlSeconds: 60, clock: () => now })
    const o = new Offloader({ storage })
    const call = { toolName: 'logs', toolCallId: 'call_t', content: logLines(3000), reuse: true }
    const a = await o.offloadResult(call)
    expect(await o.offloadResult(call)).toEqual(a)
    const records = await storage.list('')
    expect(records).toEqual([expect.stringMatching(/^offload-manifest\/[^/]+\/again-[A-Za-z0-9_-]+$/)])
    now += 61_000
    const b = await o.offloadResult(call)
    expect(b.references[0].reference).not.toBe(a.references[0].reference)
    // One record, now of the new offload (the old one held the preview of expired content).
    expect(await storage.list('')).toEqual(records)
    const held = JSON.parse(Buffer.from((await storage.read(records[0]))!).toString('utf8'))
    expect(held.references[0].reference).toBe(b.references[0].reference)
  })
})

describe('content parts', () => {
  test('images and files are stored behind placeholders; URL parts stay as they were', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const png = new Uint8Array(3000).map((_, i) => i % 251)
    const url = { type: 'image', url: 'https://example.com/a.png' }
    const r = await o.offloadResult({
      toolName: 'shot',
      toolCallId: 'p1',
      content: [
        { type: 'text', text: 'w'.repeat(1000) },
        { type: 'image', data: Buffer.from(png).toString('base64'), mediaType: 'image/png' },
        url,
        { type: 'file', data: png, mediaType: 'application/pdf', filename: 'report.pdf' },
      ],
    })
    expect(r.references.map((x: any) => x.contentType)).toEqual(['text/plain', 'image/png', 'application/pdf'])
    expect(r.parts[0]).toEqual({ type: 'text', text: r.text })
    expect(r.parts[1].text).toMatch(/^\[image: png, 3000 bytes \| ref: mem_\d+_p1_1\]$/)
    expect(r.parts[2]).toBe(url)
    expect(r.parts[3].text).toMatch(/^\[document: pdf, report\.pdf, 3000 bytes \| ref: mem_\d+_p1_3\]$/)
    const back = await o.storage.retrieve(r.references[1].reference)
    expect(Buffer.from(back.content).equals(Buffer.from(png))).toBe(true)
    expect(await o.retrievalTool.execute({ reference: r.references[1].reference })).toMatch(/^\[image: png, 3,000 bytes\] This content is binary/)
  })

  test('a JSON part is stored as JSON beside text parts, and jq queries it', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10, retrieval: 'extended' })
    const r = await o.offloadResult({
      toolName: 't',
      toolCallId: 'j1',
      content: [{ type: 'text', text: 'summary '.repeat(50) }, { type: 'json', json: records(60) }],
    })
    expect(r.references.map((x: any) => x.contentType)).toEqual(['text/plain', 'application/json'])
    expect(await o.retrievalTool.execute({ reference: r.references[1].reference, query: '.users[42].name' })).toContain('user 42')
    // Data that cannot be JSON is refused, naming the part; an item whose json is absent is not a part (the array is data).
    await expect(o.offloadResult({ toolName: 't', toolCallId: 'j2', content: [{ type: 'json', json: 10n }] })).rejects.toThrow(/^content\[0\]\.json must be JSON-serialisable data/)
    const data = await o.offloadResult({ toolName: 't', toolCallId: 'j3', content: [{ type: 'json', note: 'x'.repeat(500) }] })
    expect(data.references[0].contentType).toBe('application/json')
  })

  test('an array that is not all parts is data', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const data = [{ type: 'text', text: 'x'.repeat(500) }, { type: 'row', id: 1 }]
    const r = await o.offloadResult({ toolName: 't', toolCallId: 'd1', content: data })
    expect(r.references[0].contentType).toBe('application/json')
  })
})

describe('hostile arguments', () => {
  test('offloadResult names what is wrong', async () => {
    const o = new Offloader()
    const bad: Array<[unknown, RegExp]> = [
      [null, /offloadResult\(\) takes/],
      [{ toolName: '', toolCallId: 'a', content: 'x' }, /toolName must be a non-empty string/],
      [{ toolName: 't', toolCallId: 42, content: 'x' }, /toolCallId must be a non-empty string, got number 42/],
      [{ toolName: 't', toolCallId: 'a', content: 'x', sessionId: 7 }, /sessionId must be a non-empty string/],
      [{ toolName: 't', toolCallId: 'a', content: 'x', sessionId: 'a\ud800' }, /well-formed/],
      [{ toolName: 't', toolCallId: 'a', content: 10n }, /JSON-serialisable/],
      [{ toolName: 't', toolCallId: 'a', content: (() => { const c: any = {}; c.c = c; return c })() }, /JSON-serialisable/],
      [{ toolName: 't', toolCallId: 'a', content: [{ type: 'image', data: 5, mediaType: 'image/png' }] }, /content\[0\]\.data must be bytes/],
      [{ toolName: 't', toolCallId: 'a', content: [{ type: 'file', data: 'AAAA', mediaType: 'pdf' }] }, /content\[0\]\.mediaType must be a media type/],
    ]
    for (const [call, message] of bad) await expect(o.offloadResult(call as any)).rejects.toThrow(message)
    expect(o.stats().offloads).toBe(0)
  })

  test('the retrieval tool answers any input with a string, and null means absent (seeded fuzz)', async () => {
    const o = new Offloader({ retrieval: 'extended', maxResultTokens: 300, previewTokens: 50 })
    const r = await o.offloadResult({ toolName: 'logs', toolCallId: 'z1', content: logLines(500) })
    const ref = r.references[0].reference
    const t = o.retrievalTool
    expect(await t.execute({ reference: ref, pattern: null, line_range: null, context_lines: null, query: null, page: null, list: null })).toBe(
      await t.execute({ reference: ref }),
    )
    expect(await t.execute({ reference: ref, line_range: { start: null, end: null } } as any)).toBe(await t.execute({ reference: ref }))
    const rand = prng(2026)
    const values = [null, undefined, 0, -1, 1.5, 2 ** 53, NaN, '', 'ERROR', '(', {}, [], { start: 0, end: 3 }, { start: 2, end: 1 }, true, '\ud800', 10n]
    for (let i = 0; i < 400; i++) {
      const input: Record<string, unknown> = {}
      for (const field of ['reference', 'pattern', 'line_range', 'context_lines', 'query', 'page', 'list']) {
        if (rand.bool(0.4)) input[field] = field === 'reference' && rand.bool(0.5) ? ref : rand.pick(values)
      }
      const answer = await t.execute(input as any, rand.bool(0.2) ? ({ sessionId: rand.pick(values) } as any) : undefined)
      expect(typeof answer, JSON.stringify(input, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).toBe('string')
    }
    for (const input of [null, 'ref', 42, [ref]]) expect(await t.execute(input as any)).toMatch(/^Error: invalid input/)
    expect(await t.execute({ reference: ref, page: 0 })).toBe('Error: invalid input: page must be a whole number of at least 1')
    expect(await t.execute({ reference: ref, line_range: { start: 0, end: 2 } })).toBe('Error: invalid input: line_range.start must be a whole number of at least 1')
  })
})

describe('storage errors', () => {
  test("the storages throw the SDK's own StorageError when the SDK is installed", async () => {
    const { StorageError } = await import('@strands-agents/sdk')
    const err = await new FileStorage(dir()).write('a/../../b', new Uint8Array(1)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(StorageError)
    const bad = await new InMemoryStorage().namespace('x').write('a\\b', new Uint8Array(1)).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(StorageError)
  })
})

describe('loading', () => {
  test('context-offloader/core loads and works where no agent framework (nor zod) is installed', () => {
    const project = dir()
    const pkgDir = join(project, 'node_modules', 'context-offloader')
    mkdirSync(pkgDir, { recursive: true })
    for (const f of ['package.json', 'core.js', 'core.d.ts', 'index.js', 'binding.cjs', 'lib']) cpSync(join(ROOT, f), join(pkgDir, f), { recursive: true })
    for (const f of readdirSync(ROOT).filter((f) => f.endsWith('.node'))) cpSync(join(ROOT, f), join(pkgDir, f))
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    const script = `
      import { Offloader } from 'context-offloader/core'
      let sdk = 'absent'
      try { await import('@strands-agents/sdk'); sdk = 'present' } catch {}
      const o = new Offloader({ retrieval: 'extended' })
      const r = await o.offloadResult({ toolName: 't', toolCallId: 'c', content: 'line\\n'.repeat(5000) })
      const answer = await o.retrievalTool.execute({ reference: r.references[0].reference, line_range: { start: 2, end: 3 } })
      const { InMemoryStorage } = await import('context-offloader/core')
      const err = await new InMemoryStorage().write('a/../../b', new Uint8Array(1)).catch((e) => e)
      console.log(JSON.stringify({ sdk, answer, error: [err instanceof Error, err.name, err.constructor.name] }))
    `
    for (const [flag, file, code] of [
      ['esm', 'main.mjs', script],
      ['cjs', 'main.cjs', `const { Offloader } = require('context-offloader/core'); console.log(typeof Offloader)`],
    ]) {
      writeFileSync(join(project, file), code)
      const run = spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } })
      expect(run.status, `${flag}: ${run.stderr}`).toBe(0)
      if (flag === 'esm') expect(JSON.parse(run.stdout)).toEqual({
        sdk: 'absent',
        answer: '[Lines 2-3 of 5001]\n\n  2| line\n  3| line',
        error: [true, 'StorageError', 'StorageError'],
      })
      else expect(run.stdout.trim()).toBe('function')
    }
    // Its typings import nothing either (the adapters' and the plugin's import them).
    expect(readFileSync(join(ROOT, 'core.d.ts'), 'utf8')).not.toMatch(/^\s*(import|export)\b[^\n]*\bfrom\s+'/m)
    // The plugin's entry still needs the SDK, and says so.
    writeFileSync(join(project, 'plugin.mjs'), `import 'context-offloader'`)
    const plugin = spawnSync(process.execPath, ['plugin.mjs'], { cwd: project, encoding: 'utf8', timeout: 60_000 })
    expect(plugin.status).not.toBe(0)
    expect(plugin.stderr).toMatch(/@strands-agents\/sdk/)
  })
})
