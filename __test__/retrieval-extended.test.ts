// `retrieval: 'extended'` with a real SDK Agent and a scripted offline model: answers
// longer than the budget come in pages (each within budget, together the whole answer),
// token budgets with a native tokenizer, jq queries over JSON, the session's manifest
// (`list`, also after a restart), `offloadErrors`, `stats()` and span events.
import { afterAll, describe, expect, test } from 'vitest'
import { Agent, JsonBlock, tool } from '@strands-agents/sdk'
import { z } from 'zod'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { ContextOffloader, FileSnapshotStorage, FileStorage, InMemoryStorage, countTokensSync } from '../index.js'
import { native, toNativeText } from '../lib/native.js'
import { ScriptedModel, lastToolResultText, prng, sessionManagerFor, tempDir, textTurn, toolCallTurn, toolAnswer } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

const FOOTER = /\n\[Page (\d+) of this answer(?:\. More follows: call again with the same arguments and page: (\d+)|, the last\.)\]$/


function sessionManager(sessionId: string) {
  const d = tempDir('co-ext-sessions-')
  cleanups.push(d.cleanup)
  return sessionManagerFor(sessionId, new FileSnapshotStorage(d.path))
}

/**
 * A real agent whose tools return `outputs` (tool name -> result) in order; then the
 * model sends the retrieval inputs `next(answers, refs)` returns, one per turn, until it
 * returns undefined. Returns the answers and the references the previews showed.
 */
async function run(
  plugin: any,
  outputs: Array<[string, () => unknown]>,
  next: (answers: string[], refs: string[]) => object | undefined,
  options: { sessionId?: string; status?: 'error' } = {},
) {
  const refs: string[] = []
  const answers: string[] = []
  const tools = outputs.map(([name, make]) =>
    tool({
      name,
      description: name,
      inputSchema: z.object({}),
      callback: () => {
        const value = make()
        if (options.status === 'error') throw new Error(String(value))
        return value as any
      },
    }),
  )
  const turns: any[] = outputs.map(([name], i) => (messages: any[]) => {
    if (i > 0) refs.push(...refsIn(lastToolResultText(messages)))
    return toolCallTurn(name, `tu-${i}`, {})
  })
  let asked = false
  const step = (messages: any[]) => {
    const text = lastToolResultText(messages)
    if (!asked) refs.push(...refsIn(text))
    else answers.push(text)
    asked = true
    const input = next(answers, refs)
    return input ? toolCallTurn('retrieve_offloaded_content', `r-${answers.length}`, input) : textTurn('done')
  }
  for (let i = 0; i < 400; i++) turns.push(step)
  const model = new ScriptedModel(turns)
  const agent = new Agent({
    model,
    tools,
    plugins: [plugin],
    printer: false,
    ...(options.sessionId ? { sessionManager: sessionManager(options.sessionId) } : {}),
  } as any)
  await agent.invoke('go')
  return { answers, refs, seen: model.seen, agent }
}

/** References listed in a preview. */
function refsIn(text: string): string[] {
  return [...text.matchAll(/\n {2}(\S+) \((?:text|json)/g)].map((m) => m[1]!)
}

/** Asks page 1, 2, ... of `input` until the last page; returns the pages. */
function pager(input: object) {
  return (answers: string[], refs: string[]) => {
    const last = answers[answers.length - 1]
    if (answers.length === 0) return { reference: refs[0], ...input }
    const more = FOOTER.exec(last!)?.[2]
    return more ? { reference: refs[0], ...input, page: Number(more) } : undefined
  }
}

/** The pages without their footers, joined. */
function joined(pages: string[]): string {
  return pages.map((p) => p.replace(FOOTER, '')).join('')
}

const LOG = Array.from({ length: 3000 }, (_, i) => `2026-11-24T10:${String(i % 60).padStart(2, '0')} ${i % 7 === 0 ? 'ERROR' : 'INFO'} line ${i} ${'x'.repeat(i % 50)}`).join('\n')

describe("retrieval: 'extended'", () => {
  test('full content comes in pages within the character budget; together they are the content', { timeout: 120_000 }, async () => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended', maxResultTokens: 1000, previewTokens: 100 })
    const { answers } = await run(plugin, [['fetch', () => LOG]], pager({}))
    expect(answers.length).toBeGreaterThan(20)
    for (const page of answers) expect(page.length).toBeLessThanOrEqual(4000)
    expect(answers[0]).toMatch(/page: 2\]$/)
    expect(answers.at(-1)).toMatch(/the last\.\]$/)
    expect(joined(answers)).toBe(LOG)
    // Cut at line boundaries: every page but the last ends with a newline.
    for (const page of answers.slice(0, -1)) expect(page.replace(FOOTER, '').endsWith('\n')).toBe(true)
    const stats = plugin.stats()
    expect(stats.retrievals.full).toBe(answers.length)
    expect(stats.pagesServed).toBe(answers.length)
  })

  test('a long match list is paged: the pages are the whole unbounded answer', { timeout: 120_000 }, async () => {
    const storage = new InMemoryStorage()
    const plugin = new ContextOffloader({ storage, retrieval: 'extended', maxResultTokens: 800, previewTokens: 100 })
    const { answers, refs } = await run(plugin, [['fetch', () => LOG]], pager({ pattern: 'ERROR', context_lines: 1 }))
    expect(answers.length).toBeGreaterThan(5)
    for (const page of answers) expect(page.length).toBeLessThanOrEqual(3200)
    // The same search with an unlimited budget (the SDK's tool with a huge maxResultTokens).
    const whole = new ContextOffloader({ storage, maxResultTokens: 1e9, previewTokens: 100 })
    const tool = whole.getTools()[0] as any
    const full = await toolAnswer(tool, { reference: refs[0], pattern: 'ERROR', context_lines: 1 })
    expect(full).toMatch(/^\[429 matches for \/ERROR\/\]/)
    expect(joined(answers)).toBe(full)
  })

  test('with a native tokenizer every page is within maxResultTokens tokens (CJK text)', { timeout: 120_000 }, async () => {
    const cjk = Array.from({ length: 1500 }, (_, i) => `第${i}行：数据库连接超时，正在重试。服务器返回错误代码五百零三。`).join('\n')
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended', tokenizer: 'o200k_base', maxResultTokens: 600, previewTokens: 100 })
    const { answers } = await run(plugin, [['fetch', () => cjk]], pager({}))
    expect(answers.length).toBeGreaterThan(10)
    for (const page of answers) expect(countTokensSync(page, 'o200k_base')).toBeLessThanOrEqual(600)
    // Characters × 4 would have allowed 2,400 characters: far more than 600 tokens of CJK.
    expect(countTokensSync(cjk.slice(0, 2400), 'o200k_base')).toBeGreaterThan(600)
    expect(joined(answers)).toBe(cjk)
  })

  test('seeded fuzz: pages of mixed-script texts stay within their token budget and rejoin exactly', { timeout: 120_000 }, async () => {
    const random = prng(1124)
    const pieces = ['ERROR', 'ok', '数据库', 'сервер', '🙂', ' ', '\t', 'x'.repeat(40), '\n', '\n\n', '{"a": [1, 2]}', 'élan', '\r\n']
    for (let round = 0; round < 40; round++) {
      const text = Array.from({ length: random.int(50, 3000) }, () => random.pick(pieces)).join('')
      const budget = random.int(100, 400)
      const pages: string[] = []
      for (let page = 1; ; page++) {
        const out = await native.pageAnswer(await toNativeText(text), page, budget, 'o200k_base')
        expect(out.text).not.toBeNull()
        expect(countTokensSync(out.text!, 'o200k_base')).toBeLessThanOrEqual(budget)
        pages.push(out.text!)
        if (!out.hasMore) break
      }
      expect(pages.length === 1 ? pages[0] : joined(pages)).toBe(text)
    }
  })

  test('a page past the end says how many pages there are', { timeout: 60_000 }, async () => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended', maxResultTokens: 1000, previewTokens: 100 })
    const { answers } = await run(plugin, [['fetch', () => LOG]], (a, refs) => (a.length === 0 ? { reference: refs[0], line_range: { start: 1, end: 20 }, page: 2 } : undefined))
    expect(answers[0]).toBe('Error: page 2 is past the end of this answer (1 page).')
    expect(plugin.stats().errors.retrieval).toBe(1)
  })

  test('query: jq over a JSON result; bad expressions and non-JSON content get clear errors', { timeout: 60_000 }, async () => {
    const users = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `user ${i}`, role: i % 50 === 0 ? 'admin' : 'member', email: `u${i}@example.com` }))
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended', maxResultTokens: 1000, previewTokens: 100 })
    const inputs = [
      (ref: string) => ({ reference: ref, query: '.users[] | select(.role == "admin") | .email' }),
      (ref: string) => ({ reference: ref, query: '.users | length' }),
      (ref: string) => ({ reference: ref, query: '.users[] | select(' }),
      (ref: string) => ({ reference: ref, query: '.users[0].name | .x' }),
      (ref: string) => ({ reference: ref, query: '.users', pattern: 'x' }),
    ]
    const { answers } = await run(plugin, [['list_users', () => new JsonBlock({ json: { users } })]], (a, refs) => inputs[a.length]?.(refs[0]!))
    expect(answers[0]).toBe(users.filter((u) => u.role === 'admin').map((u) => JSON.stringify(u.email)).join('\n'))
    expect(answers[1]).toBe('400')
    expect(answers[2]).toMatch(/^Error: bad jq expression/)
    expect(answers[3]).toMatch(/^Error: jq error/)
    expect(answers[4]).toBe('Error: query cannot be combined with pattern, line_range or context_lines.')
    expect(plugin.stats().retrievals.query).toBe(5)
  })

  test('query: a pathological expression on a 20 MB document ends within its limits with a clear error', { timeout: 120_000 }, async () => {
    const item = '{"id":1,"name":"' + 'n'.repeat(80) + '","tags":["a","b","c"]}'
    const doc = `{"items":[${Array.from({ length: 180_000 }, () => item).join(',')}]}`
    expect(doc.length).toBeGreaterThan(20_000_000)
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended', maxResultTokens: 1000, previewTokens: 100 })
    const out = await plugin.offload(doc, { key: 'big' })
    const tool = plugin.getTools()[0] as any
    const ask = async (query: string) => {
      const started = performance.now()
      const text = await toolAnswer(tool, { reference: out.references[0]!.reference, query })
      return { text, ms: performance.now() - started }
    }
    for (const query of ['[.items[] as $a | .items[] | [$a, .]] | length', 'reduce range(1e12) as $x (0; . + 1)', 'def f: 1 + f; f', '[limit(1e9; repeat(.))] | length']) {
      const { text, ms } = await ask(query)
      expect(text).toMatch(/^Error: query too expensive: /)
      expect(text.split('\n')).toHaveLength(1)
      // Limits: 50 million steps or 5 s, whichever comes first (plus reading the document).
      expect(ms).toBeLessThan(20_000)
    }
    expect((await ask('.items | length')).text).toBe('180000')
  })

  test('list: what this session offloaded, newest first; after a restart too', { timeout: 120_000 }, async () => {
    const d = tempDir('co-ext-list-')
    cleanups.push(d.cleanup)
    const make = () => new ContextOffloader({ storage: new FileStorage(d.path), retrieval: 'extended', references: 'opaque', maxResultTokens: 1000, previewTokens: 100 })
    const first = await run(
      make(),
      [
        ['fetch_logs', () => LOG],
        ['list_users', () => new JsonBlock({ json: { users: Array.from({ length: 500 }, (_, i) => ({ id: i })) } })],
      ],
      (a) => (a.length === 0 ? { list: true } : undefined),
      { sessionId: 'list-session' },
    )
    const listing = first.answers[0]!
    const lines = listing.split('\n').slice(2)
    expect(listing).toMatch(/^\[Offloaded in this session: 2, newest first; times in UTC, now \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\]/)
    expect(lines[0]).toMatch(/^ref_\S{16} \| tool: list_users \| application\/json \| [\d.]+ KB \| ~?[\d,]+ tokens \| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \| JSON object \{users: array\[500\]\}$/)
    expect(lines[1]).toMatch(/^ref_\S{16} \| tool: fetch_logs \| text\/plain \| [\d.]+ KB \| ~?[\d,]+ tokens \| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \| 2026-11-24T10:00 ERROR line 0$/)
    expect(listing).not.toContain(d.path)
    // A restart: a fresh plugin and agent in the same session list the same, and the ids still read.
    const again = await run(make(), [['noop', () => 'short']], (a) => (a.length === 0 ? { list: true } : a.length === 1 ? { reference: /ref_\S{16}/.exec(a[0]!.split('\n')[3]!)![0], line_range: { start: 1, end: 1 } } : undefined), { sessionId: 'list-session' })
    expect(again.answers[0]!.split('\n').slice(2)).toEqual(lines)
    expect(again.answers[1]).toMatch(/^\[Lines 1-1 of 3000\]\n\n.*2026-11-24T10:00 ERROR line 0/)
    // Another session sees nothing of it.
    const nothing = 'Nothing was offloaded in this session (or everything offloaded has expired).'
    const other = await run(make(), [['noop', () => 'short']], (a) => (a.length === 0 ? { list: true } : undefined), { sessionId: 'another' })
    expect(other.answers[0]).toBe(nothing)
    // Deleting the session deletes its manifest too.
    expect(await new FileStorage(d.path).deleteSession('list-session')).toBe(2)
    const purged = await run(make(), [['noop', () => 'short']], (a) => (a.length === 0 ? { list: true } : undefined), { sessionId: 'list-session' })
    expect(purged.answers[0]).toBe(nothing)
  })

  test('query results past the output limit end with a line saying so; huge pages and small budgets are refused', { timeout: 120_000 }, async () => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended', maxResultTokens: 1000, previewTokens: 100 })
    const out = await plugin.offload(new JsonBlock({ json: { n: 1, pad: 'x'.repeat(10_000) } }), { key: 'j' })
    const tool = plugin.getTools()[0] as any
    const ask = (input: object) => toolAnswer(tool, { reference: out.references[0]!.reference, ...input })
    const first = await ask({ query: 'range(1100000)' })
    expect(first.startsWith('0\n1\n2\n')).toBe(true)
    const pages = Number(/page: (\d+)\]$/.exec(first)![1]) - 1
    expect(pages).toBe(1)
    // The last page (found by asking past the end) ends with the limit line.
    const past = await ask({ query: 'range(1100000)', page: 100_000 })
    const count = Number(/\((\d+) pages\)\.$/.exec(past)![1])
    const last = await ask({ query: 'range(1100000)', page: count })
    expect(last).toMatch(/999999\n\[The query stopped after 1,000,000 results at its output limit \(1,000,000 results or 64 MiB\); narrow it \(select, limit, first\) to see the rest\.\]\n\[Page \d+ of this answer, the last\.\]$/)
    expect(await ask({ line_range: { start: 1, end: 2 }, page: 2 ** 32 + 1 })).toBe(`Error: page ${2 ** 32 + 1} is past the end of this answer (1 page).`)
    expect(() => new ContextOffloader({ retrieval: 'extended', maxResultTokens: 50, previewTokens: 10 })).toThrow(
      "maxResultTokens must be at least 100 with retrieval: 'extended' (a page needs room for its footer), got 50",
    )
  })

  test('the UTF-8 length of a long text is taken natively (no pass over the string on the event loop)', async () => {
    const text = 'é'.repeat(200_000) + 'x'.repeat(100_000) + '😀'
    expect((await toNativeText(text)).utf8Length).toBe(Buffer.byteLength(text))
    const plugin = new ContextOffloader({ storage: new InMemoryStorage() })
    await plugin.offload(text, { key: 'long' })
    expect(plugin.stats().bytesOffloaded).toBe(Buffer.byteLength(text))
  })

  test('without list, a reference is required', { timeout: 60_000 }, async () => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), retrieval: 'extended' })
    const { answers } = await run(plugin, [['noop', () => 'short']], (a) => (a.length === 0 ? { pattern: 'x' } : undefined))
    expect(answers[0]).toBe('Error: reference is required (or list: true to see what was offloaded in this session).')
  })
})

describe('with a real agent: headShare and the search cache', () => {
  test("headShare: 0.2 gives the tail of a headTail preview most of the budget", { timeout: 60_000 }, async () => {
    const numbered = Array.from({ length: 5000 }, (_, i) => `line ${i + 1} ${i % 3 === 0 ? 'build step ok' : 'compiling module'}`).join('\n')
    const previews: string[] = []
    for (const headShare of [0.2, 0.8]) {
      const plugin = new ContextOffloader({ storage: new InMemoryStorage(), preview: 'headTail', headShare, previewTokens: 200, maxResultTokens: 1000 })
      const { seen } = await run(plugin, [['build', () => numbered]], () => undefined)
      previews.push(seen[1].at(-1).content[0].toolResult.content[0].text)
    }
    const split = (preview: string) => {
      const lines = preview.split('\n')
      const marker = lines.findIndex((l) => /^\[… [\d,]+ lines omitted/.test(l))
      const shown = lines.filter((l) => /^line \d+ /.test(l))
      return { head: shown.filter((_, i) => i < marker - lines.indexOf(shown[0]!)).length, total: shown.length }
    }
    const low = split(previews[0]!)
    const high = split(previews[1]!)
    expect(low.head).toBeLessThan(low.total - low.head)
    expect(high.head).toBeGreaterThan(high.total - high.head)
  })

  test('greps of one reference by an agent answer as uncached ones, from one cached text', { timeout: 60_000 }, async () => {
    const greps = [{ pattern: 'ERROR', context_lines: 0 }, { pattern: 'line 1\\d\\d ' }, { line_range: { start: 10, end: 20 } }, { pattern: 'ERROR', context_lines: 2 }]
    const answersWith = async (budget: number) => {
      native.setSearchCacheBytes(0)
      native.setSearchCacheBytes(budget)
      // In memory (a file is cached only once its last change is 50 ms old; this agent is faster).
      const plugin = new ContextOffloader({ storage: new InMemoryStorage() })
      const { answers } = await run(plugin, [['fetch', () => LOG]], (a, refs) => (greps[a.length] ? { reference: refs[0], ...greps[a.length] } : undefined))
      return { answers, entries: native.searchCacheStats().entries }
    }
    try {
      const uncached = await answersWith(0)
      const cached = await answersWith(64 * 1024 * 1024)
      expect(uncached.entries).toBe(0)
      expect(cached.entries).toBe(1)
      expect(cached.answers).toEqual(uncached.answers)
      expect(cached.answers[0]).toMatch(/^\[429 matches for \/ERROR\/\]/)
    } finally {
      native.setSearchCacheBytes(64 * 1024 * 1024)
    }
  })
})

describe('offloadErrors', () => {
  const trace = Array.from({ length: 4000 }, (_, i) => `    at frame${i} (file${i}.js:${i}:1)`).join('\n')
  test.each([
    [false, false],
    [true, true],
  ])('offloadErrors: %s offloads a huge error result: %s', { timeout: 60_000 }, async (offloadErrors, offloaded) => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), offloadErrors })
    const { seen, agent } = await run(plugin, [['build', () => trace]], () => undefined, { status: 'error' })
    const result = seen[1].at(-1).content[0].toolResult
    expect(result.status).toBe('error')
    expect(result.content[0].text.startsWith('[Offloaded: 1 blocks')).toBe(offloaded)
    expect(plugin.stats().offloads).toBe(offloaded ? 1 : 0)
    // The tool's Error stays on the result, as the SDK keeps it.
    const block = agent.messages.flatMap((m: any) => m.content).find((b: any) => b.type === 'toolResultBlock')
    expect(block.error).toBeInstanceOf(Error)
  })
})

describe('stats() and span events', () => {
  test('counters and one span event per offload and retrieval, on the spans the SDK records', { timeout: 60_000 }, async () => {
    const exporter = new InMemorySpanExporter()
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    provider.register()
    try {
      const plugin = new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base' })
      const inputs = [{ pattern: 'ERROR', context_lines: 0 }, { line_range: { start: 1, end: 5 } }, {}]
      await run(plugin, [['fetch', () => LOG]], (a, refs) => (inputs[a.length] ? { reference: refs[0], ...inputs[a.length] } : undefined))
      const stats = plugin.stats()
      expect(stats.offloads).toBe(1)
      expect(stats.blocksStored).toBe(1)
      expect(stats.bytesOffloaded).toBe(Buffer.byteLength(LOG))
      expect(stats.tokensBefore).toBe(countTokensSync(LOG, 'o200k_base'))
      expect(stats.tokensAfter).toBeGreaterThan(0)
      expect(stats.tokensAfter).toBeLessThan(1500)
      expect(stats.tokensKeptOut).toBe(stats.tokensBefore - stats.tokensAfter)
      expect(stats.retrievals).toEqual({ full: 1, pattern: 1, lineRange: 1, head: 0, query: 0, list: 0 })
      expect(stats.errors).toEqual({ offload: 0, retrieval: 0 })
      await provider.forceFlush()
      const spans = exporter.getFinishedSpans()
      const events = spans.flatMap((s) => s.events.map((e) => ({ span: s.name, ...e })))
      const offload = events.filter((e) => e.name === 'context_offloader.offload')
      expect(offload).toHaveLength(1)
      expect(offload[0]!.span).toMatch(/^execute_agent_loop_cycle/)
      expect(offload[0]!.attributes).toMatchObject({
        'context_offloader.tool_name': 'fetch',
        'context_offloader.bytes': Buffer.byteLength(LOG),
        'context_offloader.tokens_before': stats.tokensBefore,
        'context_offloader.tokens_after': stats.tokensAfter,
      })
      const retrievals = events.filter((e) => e.name === 'context_offloader.retrieve')
      expect(retrievals.map((e) => e.attributes!['context_offloader.mode'])).toEqual(['pattern', 'lineRange', 'full'])
      for (const e of retrievals) expect(e.span).toBe('execute_tool retrieve_offloaded_content')
    } finally {
      await provider.shutdown()
    }
  })

  test('without tracing nothing is recorded and nothing fails', async () => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage() })
    const out = await plugin.offload('y'.repeat(20_000), { key: 'k' })
    expect(out.references).toHaveLength(1)
    expect(plugin.stats().offloads).toBe(1)
  })
})
