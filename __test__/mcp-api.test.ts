// `createOffloadingProxy` from code (`context-offloader/mcp`): the official client on an
// in-memory transport, in front of a scripted upstream transport that answers exactly as
// a test needs (tasks, paginated tool lists, progress read in one chunk with its result,
// a dropped connection), and hostile options.
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { createOffloadingProxy } from '../mcp.js'
import { InMemoryStorage } from '../core.js'
import { scriptedUpstream, type Message } from './helpers/mcp-kit'

async function connect(upstream: any, options: Record<string, unknown> = {}) {
  const proxy = createOffloadingProxy({ upstream, log: () => {}, ...options })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await proxy.connect(serverSide)
  const client = new Client({ name: 'api-test', version: '1' })
  await client.connect(clientSide)
  return { proxy, client }
}

const bigText = (n: number) => Array.from({ length: n }, (_, i) => `row ${i} ${'z'.repeat(40)}`).join('\n')

describe('createOffloadingProxy', () => {
  it('relays progress read in the same chunk as its result, every notification first', async () => {
    const upstream = scriptedUpstream((request, reply) => {
      const token = request.params?._meta?.progressToken
      reply(
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } },
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 2, total: 2 } },
        { jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: 'done' }] } },
      )
    })
    const { client } = await connect(upstream)
    const seen: string[] = []
    const result = await client.callTool({ name: 'x', arguments: {} }, CallToolResultSchema, { onprogress: (p) => seen.push(`progress ${p.progress}`) })
    seen.push('result')
    expect(result.content).toEqual([{ type: 'text', text: 'done' }])
    expect(seen).toEqual(['progress 1', 'progress 2', 'result'])
    // The upstream saw the proxy's own token, not the client's.
    expect(upstream.sent.find((m: Message) => m.method === 'tools/call').params._meta.progressToken).toEqual(expect.any(Number))
  })

  it('relays the progress a client reports on a request of the upstream (sampling), under the upstream’s own token', async () => {
    const upstream = scriptedUpstream((request, reply) => {
      if (request.method === 'tools/call') {
        reply({ jsonrpc: '2.0', id: 'up-req', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5, _meta: { progressToken: 'up-1' } } })
        setTimeout(() => reply({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: 'ok' }] } }), 50)
      }
    })
    const proxy = createOffloadingProxy({ upstream, log: () => {} })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await proxy.connect(serverSide)
    const client = new Client({ name: 'api-test', version: '1' }, { capabilities: { sampling: {} } })
    const { CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js')
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      const token = request.params._meta?.progressToken
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token!, progress: 1, total: 2 } })
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token!, progress: 2, total: 2 } })
      return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }
    })
    await client.connect(clientSide)
    await client.callTool({ name: 'asks', arguments: {} })
    const progress = upstream.sent.filter((m: Message) => m.method === 'notifications/progress')
    expect(progress.map((m: Message) => [m.params.progressToken, m.params.progress])).toEqual([
      ['up-1', 1],
      ['up-1', 2],
    ])
    expect(upstream.sent.find((m: Message) => m.id === 'up-req')?.result?.content?.text).toBe('hi')
  })

  it('offloads the result of a task (tasks/result), not the CreateTaskResult', async () => {
    const upstream = scriptedUpstream((request, reply) => {
      if (request.method === 'tools/call') reply({ jsonrpc: '2.0', id: request.id, result: { task: { taskId: 't1', status: 'working', createdAt: '2026-01-01T00:00:00Z', ttl: null } } })
      else if (request.method === 'tasks/result') reply({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: bigText(3000) }] } })
      else reply({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } })
    }, { tools: {}, tasks: { requests: { tools: { call: {} } } } })
    const { client } = await connect(upstream)
    const created: any = await client.request({ method: 'tools/call', params: { name: 'slow', arguments: {}, task: { ttl: 60000 } } } as any, (await import('@modelcontextprotocol/sdk/types.js')).ResultSchema)
    expect(created.task.taskId).toBe('t1')
    const result: any = await client.request({ method: 'tasks/result', params: { taskId: 't1' } } as any, (await import('@modelcontextprotocol/sdk/types.js')).ResultSchema)
    expect(result.content[0].text).toMatch(/^\[Offloaded: 1 block/)
    expect(JSON.stringify(result).length).toBeLessThan(8000)
  })

  it('adds the retrieval tool once across pages, hides an upstream tool of the same name, and answers tools/list for an upstream without tools', async () => {
    const upstream = scriptedUpstream((request, reply) => {
      const page = request.params?.cursor === 'p2' ? 2 : 1
      const tools =
        page === 1
          ? [{ name: 'a', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }, { name: 'retrieve_offloaded_content', inputSchema: { type: 'object' } }]
          : [{ name: 'b', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }]
      reply({ jsonrpc: '2.0', id: request.id, result: { tools, ...(page === 1 ? { nextCursor: 'p2' } : {}) } })
    })
    const logs: string[] = []
    const { client } = await connect(upstream, { log: (m: string) => logs.push(m), neverOffload: ['keep-schema'] })
    const first = await client.listTools()
    expect(first.tools.map((t) => t.name)).toEqual(['a', 'retrieve_offloaded_content'])
    expect(first.tools[0].outputSchema).toBeUndefined()
    expect(first.nextCursor).toBe('p2')
    expect(logs.join('\n')).toMatch(/hidden behind the proxy's/)
    const second = await client.listTools({ cursor: 'p2' })
    expect(second.tools.map((t) => t.name)).toEqual(['b'])

    const bare = scriptedUpstream(() => {
      throw new Error('not reached')
    }, { prompts: {} })
    const c2 = await connect(bare)
    expect(c2.client.getServerCapabilities()).toMatchObject({ prompts: {}, tools: {} })
    expect((await c2.client.listTools()).tools.map((t) => t.name)).toEqual(['retrieve_offloaded_content'])
  })

  it('keeps outputSchema for a tool in neverOffload', async () => {
    const upstream = scriptedUpstream((request, reply) => {
      reply({ jsonrpc: '2.0', id: request.id, result: { tools: [{ name: 'exact', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } } } }] } })
    })
    const { client } = await connect(upstream, { neverOffload: ['exact'] })
    expect((await client.listTools()).tools[0].outputSchema).toEqual({ type: 'object', properties: { n: { type: 'number' } } })
  })

  it('answers calls in flight when the upstream connection drops, with an error naming it, then closes', async () => {
    const upstream = scriptedUpstream((request) => {
      if (request.params?.name === 'drop') setTimeout(() => upstream.onclose?.(), 20)
    })
    const { proxy, client } = await connect(upstream)
    const hung = client.callTool({ name: 'hang', arguments: {} }).then(
      () => 'answered',
      (e) => String(e.message),
    )
    await expect(client.callTool({ name: 'drop', arguments: {} })).rejects.toThrow(/the upstream server closed its connection during tools\/call/)
    expect(await hung).toMatch(/the upstream server closed its connection during tools\/call/)
    const end = await proxy.upstreamEnded
    expect(end).toMatchObject({ code: null, signal: null, closedByClient: false })
  })

  it('relays an upstream error as it is: code, message (not prefixed) and data', async () => {
    const upstream = scriptedUpstream((request, reply) => {
      reply({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message: 'Unknown tool: nope', data: { hint: 42 } } })
    })
    const { client } = await connect(upstream)
    const err: any = await client.callTool({ name: 'nope', arguments: {} }).catch((e) => e)
    expect(err.code).toBe(-32602)
    expect(err.message).toBe('MCP error -32602: Unknown tool: nope')
    expect(err.data).toEqual({ hint: 42 })
  })

  it('shares one storage between proxies, each with its own session', async () => {
    const storage = new InMemoryStorage({ evictAfterTurns: null })
    const answer = (request: Message, reply: (...m: Message[]) => void) => reply({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: bigText(3000) }] } })
    const one = await connect(scriptedUpstream(answer), { storage })
    const two = await connect(scriptedUpstream(answer), { storage })
    const r1: any = await one.client.callTool({ name: 't', arguments: {} })
    const ref = /\n {2}(\S+) \(/.exec(r1.content[0].text)![1]
    expect(storage.size).toBe(1)
    const mine: any = await one.client.callTool({ name: 'retrieve_offloaded_content', arguments: { reference: ref, pattern: 'row 2999 ' } })
    expect(mine.content[0].text).toContain('row 2999 ')
    const theirs: any = await two.client.callTool({ name: 'retrieve_offloaded_content', arguments: { reference: ref } })
    expect(theirs.isError).toBe(true)
  })

  it('refuses hostile options with errors that name them', () => {
    const up = { command: 'node' }
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /createOffloadingProxy\(\) takes \{ upstream/],
      [null, /createOffloadingProxy\(\) takes \{ upstream/],
      [{}, /upstream must be/],
      [{ upstream: 'node server.js' }, /upstream must be/],
      [{ upstream: { command: '' } }, /upstream\.command must be a non-empty string/],
      [{ upstream: { command: 'node', args: 'x' } }, /upstream\.args must be an array of strings/],
      [{ upstream: { command: 'node', args: [1] } }, /upstream\.args must be an array of strings/],
      [{ upstream: { command: 'node', env: { A: 1 } } }, /upstream\.env must be an object of strings/],
      [{ upstream: { command: 'node', cwd: 3 } }, /upstream\.cwd must be a string/],
      [{ upstream: { url: 'ftp://x' } }, /upstream\.url must be an http\(s\) URL/],
      [{ upstream: { url: 'not a url' } }, /upstream\.url must be an http\(s\) URL/],
      [{ upstream: up, offloadMedia: 'yes' }, /offloadMedia must be a boolean/],
      [{ upstream: up, timeoutMs: 0 }, /timeoutMs must be a positive number/],
      [{ upstream: up, timeoutMs: Infinity }, /timeoutMs must be a positive number/],
      [{ upstream: up, timeoutMs: NaN }, /timeoutMs must be a positive number/],
      [{ upstream: up, maxMessageBytes: -1 }, /maxMessageBytes must be a positive integer/],
      [{ upstream: up, log: 'stderr' }, /log must be a function/],
      [{ upstream: up, maxResultTokens: -5 }, /maxResultTokens/],
      [{ upstream: up, references: 'secret' }, /references/],
      [{ upstream: up, previewTokens: 5000 }, /previewTokens/],
    ]
    for (const [options, message] of cases) expect(() => createOffloadingProxy(options as any), JSON.stringify(options)).toThrow(message)
  })

  it('a caller’s transport serves one connection', async () => {
    const upstream = scriptedUpstream(() => {})
    await connect(upstream)
    const second = createOffloadingProxy({ upstream, log: () => {} })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await second.connect(serverSide)
    const client = new Client({ name: 'x', version: '1' })
    await expect(client.connect(clientSide)).rejects.toThrow(/a transport serves one connection/)
  })
})
