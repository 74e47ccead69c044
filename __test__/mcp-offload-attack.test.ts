// The MCP proxy's offloading side under hostile results: media stored behind
// placeholders, odd media types, many small items, embedded resources, the JS heap over
// many large results, content left behind by a finished session, results
// without `content`, structured content judged a repeat, and re-fetched task results.
// Each test says what a client should get; the official client on an in-memory
// transport, in front of a scripted upstream transport (as in mcp-api.test.ts).
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { CallToolResultSchema, ResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { createOffloadingProxy } from '../mcp.js'
import { InMemoryStorage } from '../core.js'
import { scriptedUpstream, type Message } from './helpers/mcp-kit'
import { heapUsed } from './helpers/heap.js'

/** An upstream whose every request but `initialize` is answered with the result `answer(request)`. */
const answering = (answer: (request: Message) => unknown, capabilities?: object) =>
  scriptedUpstream((request, reply) => reply({ jsonrpc: '2.0', id: request.id, result: answer(request) as any }), capabilities)

async function connect(answer: (request: Message) => unknown, options: Record<string, unknown> = {}, capabilities?: object) {
  const logs: string[] = []
  const proxy = createOffloadingProxy({ upstream: answering(answer, capabilities), log: (m: string) => logs.push(m), ...options })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await proxy.connect(serverSide)
  const client = new Client({ name: 'attack', version: '1' })
  await client.connect(clientSide)
  const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }, CallToolResultSchema) as Promise<any>
  const retrieve = (args: Record<string, unknown>) => call('retrieve_offloaded_content', args)
  return { proxy, client, call, retrieve, logs }
}

/** The references an offloaded result names (opaque ids). */
const refsOf = (text: string) => [...text.matchAll(/\b(ref_[A-Za-z0-9_-]{16})\b/g)].map((m) => m[1])
/** Every text the client got, joined. */
const allText = (result: any) => result.content.map((c: any) => c.text ?? '').join('\n')
const bigText = (n: number) => Array.from({ length: n }, (_, i) => `row ${i} ${'z'.repeat(40)}`).join('\n')

describe('MCP proxy offloading: what the client can get back', () => {
  it('media stored with offloadMedia can be read back through the retrieval tool', async () => {
    // With --offload-media, images, audio and binary resources are stored behind a
    // placeholder. The model (or the client) must be able to get them back: the
    // retrieval tool of an MCP proxy can answer an `image`/`audio` content item, or an
    // embedded `resource` with its `blob`. Today it answers "This content is binary: it
    // cannot be returned as text", so what was offloaded is lost to the client for good.
    const png = Buffer.from('89504e470d0a1a0a' + '07'.repeat(20_000), 'hex').toString('base64')
    const c = await connect(
      () => ({
        content: [
          { type: 'text', text: bigText(3000) },
          { type: 'image', data: png, mimeType: 'image/png' },
        ],
      }),
      { offloadMedia: true },
    )
    const result = await c.call('shot')
    const placeholder = result.content.find((i: any) => i.type === 'text' && /^\[image: png/.test(i.text))
    expect(placeholder).toBeDefined()
    const [ref] = refsOf(placeholder.text)
    const back = await c.retrieve({ reference: ref })
    expect(back.isError).not.toBe(true)
    const image = back.content.find((i: any) => i.type === 'image')
    expect(image, `the retrieval answered: ${allText(back).slice(0, 200)}`).toBeDefined()
    expect(image.data).toBe(png)
    expect(image.mimeType).toBe('image/png')
  })

  it('an embedded resource that is offloaded keeps its uri in what the client gets', async () => {
    // An embedded text resource ({ type: 'resource', resource: { uri, mimeType, text } })
    // is stored as bare text: its `uri` (and `mimeType`) appear nowhere, neither in the
    // result nor in the retrieval's `list`. The client can no longer tell which file or
    // resource the content was. Expected: the uri is kept (a `resource_link`, or in the
    // reference's description).
    const uri = 'file:///var/log/service-7/big.log'
    const c = await connect(() => ({ content: [{ type: 'resource', resource: { uri, mimeType: 'text/plain', text: bigText(3000) } }] }))
    const result = await c.call('read')
    expect(allText(result)).toMatch(/^\[Offloaded/)
    const listed = allText(await c.retrieve({ list: true }))
    expect(JSON.stringify(result) + listed).toContain(uri)
  })
})

describe('MCP proxy offloading: decisions', () => {
  it('a media item with a parameterised mimeType does not stop the text from being offloaded (offloadMedia)', async () => {
    // `audio/x-wav; codecs=1` and `text/csv; charset=utf-8` are valid media types. With
    // --offload-media the core refuses them ("must be a media type such as ..."), the
    // whole offload throws, and the proxy passes the result as it came: 150 KB of text
    // reach the client because of one small audio item. Expected: the parameters are
    // dropped (or the item is kept as it is), and the text is offloaded as without it.
    const audio = Buffer.alloc(300, 7).toString('base64')
    for (const odd of [
      { type: 'audio', data: audio, mimeType: 'audio/x-wav; codecs=1' },
      { type: 'resource', resource: { uri: 'file:///t.csv', mimeType: 'text/csv; charset=utf-8', blob: audio } },
    ]) {
      const c = await connect(() => ({ content: [{ type: 'text', text: bigText(3000) }, odd] }), { offloadMedia: true })
      const result = await c.call('t')
      expect(c.logs.join('\n'), 'no offload failure is logged').not.toMatch(/passed on as it came/)
      expect(JSON.stringify(result).length, `${odd.type}: the client got the whole text`).toBeLessThan(8000)
    }
  })

  it('text and media together above the threshold are offloaded (offloadMedia)', async () => {
    // With --offload-media, media "count as their base64 text". The media rule compares
    // the media alone with the limit, and the size rule the text alone, so 75 tokens of
    // text and 50 tokens of image under a 100-token limit (125 in all, what the client
    // pays) pass unchanged. Expected: they are counted together.
    const image = Buffer.alloc(150, 7).toString('base64') // 200 base64 characters: 50 tokens
    const c = await connect(
      () => ({
        content: [
          { type: 'text', text: 'x'.repeat(300) }, // 75 tokens
          { type: 'image', data: image, mimeType: 'image/png' },
        ],
      }),
      { offloadMedia: true, tokenizer: 'heuristic', maxResultTokens: 100, previewTokens: 10 },
    )
    const result = await c.call('t')
    expect(allText(result)).toMatch(/^\[Offloaded/)
  })

  it('what replaces a result of many small text items stays small (2,000 items)', async () => {
    // Every text item becomes a block of its own, and the replacement lists one reference
    // line per block: 2,000 items of 100 bytes (~50k tokens) are "offloaded" into a
    // replacement of ~90 KB (~25k tokens), ten times --max-result-tokens; with 10,000
    // items the client gets ~450 KB. Search results, rows and log records often come one
    // item each. Expected: the replacement stays near the preview's size (consecutive
    // text items stored as one block, or the reference list capped with a pointer to
    // `list`).
    const content = Array.from({ length: 2000 }, (_, i) => ({ type: 'text', text: `hit ${i}: ${'y'.repeat(90)}` }))
    const c = await connect(() => ({ content }))
    const result = await c.call('search')
    expect(allText(result)).toMatch(/^\[Offloaded/)
    expect(JSON.stringify(result).length).toBeLessThan(8000 * 2)
  })

  it('a result with structuredContent and no content field is offloaded', async () => {
    // `content` is required by the schema, but the official client accepts a result
    // without it (it defaults to []), and hand-written servers send one. The proxy skips
    // any result whose `content` is not an array, so a 150 KB structuredContent reaches
    // the client whole. Expected: it is offloaded like the same result with `content: []`.
    const rows = bigText(3000).split('\n')
    const c = await connect(() => ({ structuredContent: { rows } }))
    const result = await c.call('rows')
    expect(JSON.stringify(result).length).toBeLessThan(8000)
  })

  it('structuredContent whose one field repeats a text keeps its field name retrievable', async () => {
    // structuredContent `{ summary: "3 files changed" }` is judged a repeat because a
    // text item equals its one string field, and it is dropped: the name `summary` is
    // nowhere, and `query: '.summary'` has nothing to run on. Only an exact repeat of the
    // whole JSON, or the filesystem server's `{ content: text }`, says nothing new.
    const c = await connect(() => ({
      content: [
        { type: 'text', text: '3 files changed' },
        { type: 'text', text: bigText(3000) },
      ],
      structuredContent: { summary: '3 files changed' },
    }))
    const result = await c.call('diff')
    const refs = refsOf(allText(result))
    const answers = await Promise.all(refs.map((reference) => c.retrieve({ reference, query: '.summary' })))
    expect(answers.map((a) => allText(a).slice(0, 80))).toContain('"3 files changed"')
  })

  it('a task result fetched again is still not offloaded for a tool in neverOffload', async () => {
    // The tool name of a task is forgotten after its first successful tasks/result, so
    // fetching the result again (allowed while the task is kept) offloads it as tool
    // "tool", past neverOffload.
    const answer = (request: Message) => {
      if (request.method === 'tools/call') return { task: { taskId: 't1', status: 'working', createdAt: '2026-01-01T00:00:00Z', ttl: null } }
      if (request.method === 'tasks/result') return { content: [{ type: 'text', text: bigText(3000) }] }
      return {}
    }
    const c = await connect(answer, { neverOffload: ['exact'] }, { tools: {}, tasks: { requests: { tools: { call: {} } } } })
    await c.client.request({ method: 'tools/call', params: { name: 'exact', arguments: {}, task: { ttl: 60000 } } } as any, ResultSchema)
    const first: any = await c.client.request({ method: 'tasks/result', params: { taskId: 't1' } } as any, ResultSchema)
    expect(first.content[0].text.slice(0, 40)).toMatch(/^row 0 /)
    const again: any = await c.client.request({ method: 'tasks/result', params: { taskId: 't1' } } as any, ResultSchema)
    expect(again.content[0].text.slice(0, 40)).toMatch(/^row 0 /)
  })
})

describe('MCP proxy offloading: memory and sessions', () => {
  it('the JS heap does not keep every offloaded text alive', async () => {
    // The in-memory manifest keeps each block's first line (`firstLineOf`), a
    // `slice()` of the whole text: V8 makes it a sliced string that holds the original
    // alive. Every offloaded text thus stays in the JS heap for the proxy's lifetime,
    // whatever --max-bytes says: 100 results of 10 MB with --max-bytes 256M reach a peak
    // RSS of ~1.5 GB (the bar is 600 MB), 5 of 200 MB reach ~2.1 GB. Expected: the heap
    // returns to about where it was (the first line copied into a string of its own).
    let n = 0
    const storage = new InMemoryStorage({ evictAfterTurns: null, maxBytes: 30_000_000 })
    const c = await connect(() => ({ content: [{ type: 'text', text: `result ${n++} of a long first line\n${'q'.repeat(20_000_000)}` }] }), { storage })
    await c.call('t')
    const before = heapUsed()
    for (let i = 0; i < 4; i++) expect(allText(await c.call('t'))).toMatch(/^\[Offloaded/)
    const grown = heapUsed() - before
    // Four more results of 20 MB: without the leak the heap grows by far less than one.
    expect(grown).toBeLessThan(15_000_000)
  })

  it('a finished session leaves nothing behind in a shared storage (opaque references)', async () => {
    // With opaque references (the default), what a proxy stored is readable only through
    // that proxy's session. Once its client is gone (a --listen session closed, a stdio
    // client gone), nobody can read it again, yet it stays in the storage: the CLI's
    // default store is native memory with no TTL and no budget, so a long-running
    // `--listen` proxy grows by every session's offloads for good. Expected: the
    // session's content is deleted when its connection ends.
    const storage = new InMemoryStorage({ evictAfterTurns: null })
    const c = await connect(() => ({ content: [{ type: 'text', text: bigText(3000) }] }), { storage })
    expect(allText(await c.call('t'))).toMatch(/^\[Offloaded/)
    expect(storage.size).toBe(1)
    await c.client.close()
    await c.proxy.upstreamEnded
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(storage.size).toBe(0)
  })
})
