// The LangChain.js adapter (`context-offloader/langchain`) in LangChain's real
// `createAgent` loop, driven by LangChain's own fake chat model (`fakeModel()`, which
// records every prompt): what the model receives on the step after a large tool result,
// what the checkpointer keeps, the retrieval tool called from inside the loop, sessions
// per thread_id, parallel calls, content blocks, errors and their order with
// `toolErrorMiddleware`, and hostile inputs.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest'
import { AIMessage, createAgent, createMiddleware, fakeModel, HumanMessage, tool, toolErrorMiddleware, ToolMessage } from 'langchain'
import { Command, MemorySaver } from '@langchain/langgraph'
import { contextOffloaderMiddleware, METADATA_KEY, MIDDLEWARE_NAME } from '../langchain.js'
import { FileStorage, InMemoryStorage } from '../core.js'
import { ContextOffloader, InMemoryStorage as PluginMemoryStorage } from '../index.js'
import { prng, tempDir, toolAnswer } from './helpers/harness.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RETRIEVE = 'retrieve_offloaded_content'
const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))
afterEach(() => vi.restoreAllMocks())

/** A service log of `n` lines (deterministic). */
const logLines = (n: number, seed = 1) => {
  const r = prng(seed)
  return Array.from({ length: n }, (_, i) => `${i} ${r.pick(['INFO', 'WARN', 'ERROR'])} request ${r.int(0, 1e6)} done in ${r.int(1, 900)} ms`).join('\n')
}
const LOG = logLines(50_000) // about 2 MB
const NO_ARGS = { type: 'object', properties: {} } as const

/** A tool that returns `value` (or what `value()` gives). */
function returning(name: string, value: unknown) {
  return tool(async () => (typeof value === 'function' ? (value as () => unknown)() : value), { name, description: `returns ${name}`, schema: NO_ARGS })
}

/** A tool call the fake model makes. */
const call = (name: string, id: string, args: Record<string, unknown> = {}) => ({ name, args, id })

/** The ToolMessages of a prompt, by tool call id. */
function toolMessages(messages: any[]): Record<string, any> {
  return Object.fromEntries(messages.filter((m) => m.type === 'tool').map((m) => [m.tool_call_id, m]))
}

/** The first reference a preview lists, read as a model reads it. */
function referenceIn(preview: string): string {
  const found = /\[Stored references:\]\n\s+(\S+)/.exec(preview)
  if (!found) throw new Error(`no reference in ${preview.slice(0, 200)}`)
  return found[1]
}

/** A model turn that calls the retrieval tool with `args(reference)`, the reference read from the last ToolMessage. */
function retrieveFromLast(id: string, args: (reference: string) => Record<string, unknown>) {
  return (messages: any[]) => {
    const last = messages.filter((m) => m.type === 'tool').at(-1)
    return new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: args(referenceIn(String(last.content))), id }] })
  }
}

/** The Strands plugin over a fresh in-memory storage (same references as a fresh middleware) and its retrieval tool. */
function strandsPlugin(options: Record<string, unknown> = {}) {
  const plugin = new ContextOffloader({ tokenizer: 'heuristic', ...options, storage: new PluginMemoryStorage() })
  return { plugin, tool: plugin.getTools()[0] as any }
}

const run = (agent: any, thread?: string | number, text = 'go') =>
  agent.invoke({ messages: [new HumanMessage(text)] }, thread === undefined ? {} : { configurable: { thread_id: thread } })

describe('a large result in the agent loop', () => {
  test('the next prompt holds the preview (the Strands plugin text), the checkpoint holds no megabytes, and retrieval answers lines', async () => {
    const offloading = contextOffloaderMiddleware()
    const checkpointer = new MemorySaver()
    const input = { pattern: 'request 4242\\d* ', context_lines: 1 }
    const model = fakeModel()
      .respondWithTools([call('fetch_logs', 'call_1')])
      .respond(retrieveFromLast('call_2', (reference) => ({ reference, ...input })))
      .respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: [returning('fetch_logs', LOG)], middleware: [offloading], checkpointer })
    const out = await run(agent, 't-1')

    const { plugin, tool: pluginTool } = strandsPlugin()
    const expected = await plugin.offload(LOG, { key: 'call_1' })
    const seen = toolMessages(model.calls[1].messages).call_1
    expect(seen.content).toBe(expected.text)
    expect(seen.content.length).toBeLessThan(8_000)
    expect(seen.status).toBe('success')
    expect(seen.metadata[METADATA_KEY]).toEqual({ references: expected.references, tokens: expected.tokens, approximate: true, truncated: false })

    // The model's retrieval from inside the loop answers what the Strands plugin's tool answers.
    const answer = toolMessages(model.calls[2].messages).call_2
    const reference = expected.references[0].reference
    expect(answer.name).toBe(RETRIEVE)
    expect(answer.content).toBe(await toolAnswer(pluginTool, { reference, ...input }))
    const matching = LOG.split('\n').filter((line) => /request 4242\d* /.test(line))
    expect(matching.length).toBeGreaterThan(0)
    for (const line of matching) expect(answer.content).toContain(line)

    // The state and every checkpoint of the thread keep the preview, not the log.
    const middleLine = LOG.split('\n')[25_000]
    expect(out.messages.find((m: any) => m.tool_call_id === 'call_1').content).toBe(expected.text)
    let checkpoints = 0
    for await (const saved of checkpointer.list({ configurable: { thread_id: 't-1' } })) {
      const json = JSON.stringify(saved)
      expect(json.length).toBeLessThan(100_000)
      expect(json).not.toContain(middleLine)
      checkpoints++
    }
    expect(checkpoints).toBeGreaterThan(2)
    const state = await agent.getState({ configurable: { thread_id: 't-1' } })
    const kept = state.values.messages.find((m: any) => m.tool_call_id === 'call_1')
    expect(kept.content).toBe(expected.text)
    expect(kept.metadata[METADATA_KEY].references[0].reference).toBe(reference)
    expect(offloading.offloader.stats()).toMatchObject({ offloads: 1, retrievals: { pattern: 1 } })
  })

  test('small results, JSON of an object under the limit and the retrieval answers themselves go to the model unchanged', async () => {
    const object = { users: [{ id: 1, name: 'a' }], total: 1 }
    const model = fakeModel()
      .respondWithTools([call('small', 'c1'), call('object', 'c2'), call('blocks', 'c3')])
      .respond(new AIMessage('done'))
    const blocks = [{ type: 'text', text: 'short' }, { type: 'image', url: 'https://example.com/a.png' }]
    const agent = createAgent({
      model,
      tools: [returning('small', 'x'.repeat(9_000)), returning('object', object), returning('blocks', blocks)],
      middleware: [contextOffloaderMiddleware()],
    })
    await run(agent)
    const seen = toolMessages(model.calls[1].messages)
    expect(seen.c1.content).toBe('x'.repeat(9_000))
    expect(seen.c2.content).toBe(JSON.stringify(object))
    expect(seen.c3.content).toEqual(blocks)
    for (const id of ['c1', 'c2', 'c3']) expect(seen[id].metadata?.[METADATA_KEY]).toBeUndefined()
  })

  test('a large JSON result (an object the tool returned) is offloaded as the compact JSON the model would have read', async () => {
    const records = { users: Array.from({ length: 3_000 }, (_, i) => ({ id: i, role: i % 40 ? 'member' : 'admin' })) }
    const model = fakeModel()
      .respondWithTools([call('users', 'c1')])
      .respond(retrieveFromLast('c2', (reference) => ({ reference, query: '.users[] | select(.role == "admin") | .id' })))
      .respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: [returning('users', records)], middleware: [contextOffloaderMiddleware({ retrieval: 'extended', preview: 'structure' })] })
    await run(agent)
    const preview = toolMessages(model.calls[1].messages).c1.content
    expect(preview).toContain('"users": array[3,000] of object')
    const answer = toolMessages(model.calls[2].messages).c2.content
    expect(answer.split('\n').slice(0, 3)).toEqual(['0', '40', '80'])
  })

  test('parallel calls: each result gets its own preview and references, whatever order they finish in', async () => {
    const slow = tool(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 30))
        return logLines(20_000, 2)
      },
      { name: 'slow_logs', description: 'slow', schema: NO_ARGS },
    )
    const model = fakeModel()
      .respondWithTools([call('slow_logs', 'c1'), call('fast_logs', 'c2'), call('small', 'c3')])
      .respond((messages: any[]) => {
        const seen = toolMessages(messages)
        return new AIMessage({
          content: '',
          tool_calls: [
            { name: RETRIEVE, args: { reference: referenceIn(seen.c1.content), line_range: { start: 2, end: 3 } }, id: 'r1' },
            { name: RETRIEVE, args: { reference: referenceIn(seen.c2.content), line_range: { start: 2, end: 3 } }, id: 'r2' },
          ],
        })
      })
      .respond(new AIMessage('done'))
    const agent = createAgent({
      model,
      tools: [slow, returning('fast_logs', logLines(20_000, 3)), returning('small', 'tiny')],
      middleware: [contextOffloaderMiddleware()],
    })
    await run(agent)
    const seen = toolMessages(model.calls[1].messages)
    expect(referenceIn(seen.c1.content)).toMatch(/_c1_0$/)
    expect(referenceIn(seen.c2.content)).toMatch(/_c2_0$/)
    expect(seen.c1.content).toContain(logLines(20_000, 2).split('\n')[0])
    expect(seen.c2.content).toContain(logLines(20_000, 3).split('\n')[0])
    expect(seen.c3.content).toBe('tiny')
    const answers = toolMessages(model.calls[2].messages)
    expect(answers.r1.content).toContain(logLines(20_000, 2).split('\n')[1])
    expect(answers.r2.content).toContain(logLines(20_000, 3).split('\n')[1])
    expect(answers.r1.content).not.toContain(logLines(20_000, 3).split('\n')[1])
  })

  test('content blocks: text and inline media are stored, URL and file-id blocks stay as they are', async () => {
    const png = Buffer.alloc(40_000, 7)
    const jpeg = Buffer.alloc(30_000, 9)
    const kept = [
      { type: 'image', url: 'https://example.com/chart.png' },
      { type: 'file', fileId: 'file-123' },
    ]
    const blocks = [
      { type: 'text', text: LOG.slice(0, 200_000) },
      { type: 'image', mimeType: 'image/png', data: png.toString('base64') },
      kept[0],
      { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` } },
      kept[1],
      { type: 'file', mimeType: 'application/pdf', data: new Uint8Array(jpeg), metadata: { filename: 'report.pdf' } },
    ]
    const model = fakeModel()
      .respondWithTools([call('report', 'c1')])
      .respond((messages: any[]) => {
        const refs = toolMessages(messages).c1.metadata[METADATA_KEY].references
        return new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: { reference: refs[1].reference }, id: 'c2' }] })
      })
      .respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: [returning('report', blocks)], middleware: [contextOffloaderMiddleware()] })
    await run(agent)
    const seen = toolMessages(model.calls[1].messages).c1
    const content = seen.content as any[]
    expect(content[0].type).toBe('text')
    expect(content[0].text).toMatch(/^\[Offloaded: 6 blocks/)
    expect(content.filter((b) => b.type === 'text').map((b) => b.text).slice(1)).toEqual([
      expect.stringMatching(/^\[image: png, 40000 bytes \| ref: mem_\d+_c1_1\]$/),
      expect.stringMatching(/^\[image: jpeg, 30000 bytes \| ref: mem_\d+_c1_3\]$/),
      expect.stringMatching(/^\[document: pdf, report\.pdf, 30000 bytes \| ref: mem_\d+_c1_5\]$/),
    ])
    expect(content.filter((b) => b.type !== 'text')).toEqual(kept)
    expect(JSON.stringify(content).length).toBeLessThan(10_000)
    const refs = seen.metadata[METADATA_KEY].references
    expect(refs.map((r: any) => r.contentType)).toEqual(['text/plain', 'image/png', 'image/jpeg', 'application/pdf'])
    expect(toolMessages(model.calls[2].messages).c2.content).toBe('[image: png, 40,000 bytes] This content is binary: it cannot be returned as text.')
  })

  test('a Command a tool returns passes through untouched (its messages are the tool\'s own)', async () => {
    const commanding = tool(
      async (_input: unknown, runtime: any) =>
        new Command({ update: { messages: [new ToolMessage({ content: LOG.slice(0, 100_000), tool_call_id: runtime.toolCallId, name: 'commanding' })] } }),
      { name: 'commanding', description: 'c', schema: NO_ARGS },
    )
    const model = fakeModel().respondWithTools([call('commanding', 'c1')]).respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: [commanding], middleware: [contextOffloaderMiddleware()] })
    await run(agent)
    expect(toolMessages(model.calls[1].messages).c1.content).toBe(LOG.slice(0, 100_000))
  })
})

describe('sessions: the thread_id', () => {
  test('opaque references of one thread are not found in another, and are again in their own', async () => {
    const offloading = contextOffloaderMiddleware({ references: 'opaque', retrieval: 'extended' })
    let reference = ''
    const grep = (id: string) => () => new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: { reference, pattern: 'request 4242' }, id }] })
    const model = fakeModel()
      // thread a: offload, then retrieve
      .respondWithTools([call('fetch_logs', 'a1')])
      .respond((messages: any[]) => {
        reference = referenceIn(toolMessages(messages).a1.content)
        return grep('a2')()
      })
      .respond(new AIMessage('done'))
      // thread b: the same reference, and a listing
      .respond(() => new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: { reference, pattern: 'request 4242' }, id: 'b1' }, { name: RETRIEVE, args: { list: true }, id: 'b2' }] }))
      .respond(new AIMessage('done'))
      // thread a again
      .respond(grep('a3'))
      .respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: [returning('fetch_logs', LOG)], middleware: [offloading], checkpointer: new MemorySaver() })
    await run(agent, 'a')
    await run(agent, 'b')
    await run(agent, 'a')
    expect(reference).toMatch(/^ref_/)
    const line = LOG.split('\n').find((l) => l.includes('request 4242'))!
    expect(toolMessages(model.calls[2].messages).a2.content).toContain(line)
    const inB = toolMessages(model.calls[4].messages)
    expect(inB.b1.content).toBe(`Error: reference not found: ${reference}`)
    expect(inB.b2.content).toBe('Nothing was offloaded in this session (or everything offloaded has expired).')
    expect(toolMessages(model.calls[6].messages).a3.content).toContain(line)
  })

  test('runs without a thread_id share the middleware\'s own session; agents share a store through `storage` and a thread_id', async () => {
    const storage = new InMemoryStorage()
    const first = contextOffloaderMiddleware({ storage, references: 'opaque' })
    const second = contextOffloaderMiddleware({ storage, references: 'opaque' })
    const refs: Record<string, string> = {}
    const offload = (key: string, id: string) => (messages: any[]) => {
      void messages
      return new AIMessage({ content: '', tool_calls: [call('fetch_logs', id)] })
    }
    const remember = (key: string, id: string) => (messages: any[]) => {
      refs[key] = referenceIn(toolMessages(messages)[id].content)
      return new AIMessage('done')
    }
    const retrieve = (key: string, id: string) => () => new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: { reference: refs[key], line_range: { start: 1, end: 1 } }, id }] })
    const modelOne = fakeModel()
      .respond(offload('own', 'o1')).respond(remember('own', 'o1')) // no thread
      .respond(retrieve('own', 'o2')).respond(new AIMessage('done')) // no thread again
      .respond(retrieve('own', 'o3')).respond(new AIMessage('done')) // thread x
      .respond(offload('shared', 's1')).respond(remember('shared', 's1')) // thread s
    const modelTwo = fakeModel()
      .respond(retrieve('own', 'p1')).respond(new AIMessage('done')) // no thread
      .respond(retrieve('shared', 'p2')).respond(new AIMessage('done')) // thread s
      .respond(retrieve('shared', 'p3')).respond(new AIMessage('done')) // no thread
    const agentOne = createAgent({ model: modelOne, tools: [returning('fetch_logs', LOG)], middleware: [first] })
    const agentTwo = createAgent({ model: modelTwo, tools: [returning('fetch_logs', LOG)], middleware: [second] })
    const firstLine = `  1| ${LOG.split('\n')[0]}`
    const answer = (model: any, step: number, id: string) => String(toolMessages(model.calls[step].messages)[id].content)

    await run(agentOne)
    await run(agentOne)
    expect(answer(modelOne, 3, 'o2')).toContain(firstLine)
    await run(agentOne, 'x')
    expect(answer(modelOne, 5, 'o3')).toBe(`Error: reference not found: ${refs.own}`)
    await run(agentOne, 's')
    await run(agentTwo)
    expect(answer(modelTwo, 1, 'p1')).toBe(`Error: reference not found: ${refs.own}`)
    await run(agentTwo, 's')
    expect(answer(modelTwo, 3, 'p2')).toContain(firstLine)
    await run(agentTwo)
    expect(answer(modelTwo, 5, 'p3')).toBe(`Error: reference not found: ${refs.shared}`)
  })

  test('a numeric thread_id is the thread of its string; an empty one is no thread', async () => {
    let reference = ''
    const retrieve = (id: string) => () => new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: { reference, line_range: { start: 2, end: 2 } }, id }] })
    const model = fakeModel()
      .respondWithTools([call('fetch_logs', 'c1')])
      .respond((messages: any[]) => {
        reference = referenceIn(toolMessages(messages).c1.content)
        return new AIMessage('done')
      })
      .respond(retrieve('c2')).respond(new AIMessage('done'))
      .respond(retrieve('c3')).respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: [returning('fetch_logs', LOG)], middleware: [contextOffloaderMiddleware({ references: 'opaque' })] })
    await run(agent, 7)
    await run(agent, '7')
    await run(agent, '')
    expect(toolMessages(model.calls[3].messages).c2.content).toContain(`  2| ${LOG.split('\n')[1]}`)
    expect(toolMessages(model.calls[5].messages).c3.content).toBe(`Error: reference not found: ${reference}`)
  })

  test('after a restart, a FileStorage and the same thread_id find what was offloaded before', async () => {
    const dir = tempDir('co-langchain-')
    cleanups.push(dir.cleanup)
    let reference = ''
    const before = fakeModel().respondWithTools([call('fetch_logs', 'c1')]).respond((messages: any[]) => {
      reference = referenceIn(toolMessages(messages).c1.content)
      return new AIMessage('done')
    })
    const options = { references: 'opaque', retrieval: 'extended' } as const
    await run(createAgent({ model: before, tools: [returning('fetch_logs', LOG)], middleware: [contextOffloaderMiddleware({ ...options, storage: new FileStorage(dir.path) })] }), 'kept')
    const after = fakeModel()
      .respond(() => new AIMessage({ content: '', tool_calls: [{ name: RETRIEVE, args: { reference, pattern: 'request 4242' }, id: 'c2' }] }))
      .respond(new AIMessage('done'))
    await run(createAgent({ model: after, tools: [], middleware: [contextOffloaderMiddleware({ ...options, storage: new FileStorage(dir.path) })] }), 'kept')
    expect(reference).toMatch(/^ref_/)
    expect(toolMessages(after.calls[1].messages).c2.content).toContain(LOG.split('\n').find((l) => l.includes('request 4242')))
  })
})

describe('errors and toolErrorMiddleware', () => {
  const BIG_ERROR = `upstream failed: ${'x'.repeat(40_000)}`
  const failing = () =>
    tool(
      async () => {
        throw new Error(BIG_ERROR)
      },
      { name: 'flaky', description: 'fails', schema: NO_ARGS },
    )
  /** LangChain's own text for a tool error when no middleware wraps tool calls. */
  const asLangChainDoes = toolErrorMiddleware({ onError: (error) => `${error}\n Please fix your mistakes.` })
  const erroring = () => fakeModel().respondWithTools([call('flaky', 'c1')]).respond(new AIMessage('done'))

  test('without toolErrorMiddleware a throwing tool ends the run, as with any wrapToolCall middleware', async () => {
    const passthrough = createMiddleware({ name: 'passthrough', wrapToolCall: (request, handler) => handler(request) })
    await expect(run(createAgent({ model: erroring(), tools: [failing()], middleware: [passthrough] }))).rejects.toThrow('upstream failed')
    await expect(run(createAgent({ model: erroring(), tools: [failing()], middleware: [contextOffloaderMiddleware()] }))).rejects.toThrow('upstream failed')
  })

  test('first the offloader, then toolErrorMiddleware: the model gets what it gets with no middleware at all', async () => {
    const bare = erroring()
    await run(createAgent({ model: bare, tools: [failing()] }))
    const wrapped = erroring()
    await run(createAgent({ model: wrapped, tools: [failing()], middleware: [contextOffloaderMiddleware(), asLangChainDoes] }))
    const expected = toolMessages(bare.calls[1].messages).c1
    const seen = toolMessages(wrapped.calls[1].messages).c1
    expect(expected.status).toBe('error')
    expect(seen.status).toBe('error')
    expect(seen.content).toBe(expected.content)
    expect(seen.content).toContain(BIG_ERROR)
  })

  test('offloadErrors offloads a large error when the offloader comes first, and keeps its error status', async () => {
    const model = erroring()
    await run(createAgent({ model, tools: [failing()], middleware: [contextOffloaderMiddleware({ offloadErrors: true }), asLangChainDoes] }))
    const seen = toolMessages(model.calls[1].messages).c1
    expect(seen.status).toBe('error')
    expect(seen.content).toMatch(/^\[Offloaded: 1 blocks/)
    expect(seen.content).toContain('Error: upstream failed: xxx')
    expect(seen.content.length).toBeLessThan(8_000)
  })

  test('with toolErrorMiddleware first, the offloader never sees a thrown error, even with offloadErrors', async () => {
    const model = erroring()
    await run(createAgent({ model, tools: [failing()], middleware: [asLangChainDoes, contextOffloaderMiddleware({ offloadErrors: true })] }))
    const seen = toolMessages(model.calls[1].messages).c1
    expect(seen.status).toBe('error')
    expect(seen.content).toBe(`Error: ${BIG_ERROR}\n Please fix your mistakes.`)
  })

  test('an error ToolMessage a tool returns itself is kept unless offloadErrors', async () => {
    const returnsError = tool(async (_input: unknown, runtime: any) => new ToolMessage({ content: BIG_ERROR, tool_call_id: runtime.toolCallId, name: 'flaky', status: 'error' }), {
      name: 'flaky',
      description: 'fails',
      schema: NO_ARGS,
    })
    const kept = erroring()
    await run(createAgent({ model: kept, tools: [returnsError], middleware: [contextOffloaderMiddleware()] }))
    expect(toolMessages(kept.calls[1].messages).c1.content).toBe(BIG_ERROR)
    const offloaded = erroring()
    await run(createAgent({ model: offloaded, tools: [returnsError], middleware: [contextOffloaderMiddleware({ offloadErrors: true })] }))
    const seen = toolMessages(offloaded.calls[1].messages).c1
    expect(seen.content).toMatch(/^\[Offloaded: 1 blocks/)
    expect(seen.status).toBe('error')
  })
})

describe('hostile inputs', () => {
  test('bad options are refused at construction, naming the option', () => {
    for (const options of [null, 5, 'big', []]) {
      expect(() => contextOffloaderMiddleware(options as any)).toThrow(TypeError)
      expect(() => contextOffloaderMiddleware(options as any)).toThrow(/contextOffloaderMiddleware options must be an object/)
    }
    expect(() => contextOffloaderMiddleware({ maxResultTokens: -1 })).toThrow(/contextOffloaderMiddleware: maxResultTokens/)
    expect(() => contextOffloaderMiddleware({ maxResultTokens: 100 })).toThrow(/previewTokens/)
    expect(() => contextOffloaderMiddleware({ preview: 'all' as any })).toThrow(/preview 'all'/)
    expect(() => contextOffloaderMiddleware({ storage: 5 as any })).toThrow(TypeError)
    expect(() => contextOffloaderMiddleware({ storage: 5 as any })).toThrow(/contextOffloaderMiddleware: storage must be/)
    expect(() => contextOffloaderMiddleware({ shouldOffload: 3 as any })).toThrow(/shouldOffload must be a function/)
    expect(() => contextOffloaderMiddleware({ references: 'ids' as any })).toThrow(/references/)
  })

  test('null fields from strict-schema models mean absent; a wrong type is LangChain\'s error ToolMessage naming the field', async () => {
    const model = fakeModel()
      .respondWithTools([call('fetch_logs', 'c1')])
      .respond((messages: any[]) => {
        const reference = referenceIn(toolMessages(messages).c1.content)
        return new AIMessage({
          content: '',
          tool_calls: [
            { name: RETRIEVE, args: { reference, pattern: null, line_range: { start: 10, end: 12 }, context_lines: null }, id: 'n1' },
            { name: RETRIEVE, args: { reference, pattern: 'request 4242', line_range: { start: null, end: null }, context_lines: null }, id: 'n2' },
            { name: RETRIEVE, args: { reference, context_lines: 'many' }, id: 'n3' },
            { name: RETRIEVE, args: { reference: 'mem_999_nothing_0', pattern: 'x' }, id: 'n4' },
          ],
        })
      })
      .respond(new AIMessage('done'))
    await run(createAgent({ model, tools: [returning('fetch_logs', LOG)], middleware: [contextOffloaderMiddleware()] }))
    const { plugin, tool: pluginTool } = strandsPlugin()
    const reference = (await plugin.offload(LOG, { key: 'c1' })).references[0].reference
    const seen = toolMessages(model.calls[2].messages)
    expect(seen.n1.content).toBe(await toolAnswer(pluginTool, { reference, line_range: { start: 10, end: 12 } }))
    expect(seen.n2.content).toBe(await toolAnswer(pluginTool, { reference, pattern: 'request 4242' }))
    expect(seen.n3.status).toBe('error')
    expect(seen.n3.content).toContain('context_lines')
    expect(seen.n4.content).toBe(await toolAnswer(pluginTool, { reference: 'mem_999_nothing_0', pattern: 'x' }))
    expect(seen.n4.content).toMatch(/not found/)
  })

  test('content the core cannot read, and a storage that fails, keep the result as it is (and the run goes on)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const unreadable = [{ type: 'text', text: LOG.slice(0, 50_000) }, { type: 'image', mimeType: 'not a media type', data: 'AAAA' }]
    const broken = {
      store: async () => {
        throw new Error('disk full')
      },
      retrieve: async (reference: string) => {
        throw new Error(`Reference not found: ${reference}`)
      },
    }
    const model = fakeModel().respondWithTools([call('unreadable', 'c1')]).respond(new AIMessage('done'))
    await run(createAgent({ model, tools: [returning('unreadable', unreadable)], middleware: [contextOffloaderMiddleware()] }))
    expect(toolMessages(model.calls[1].messages).c1.content).toEqual(unreadable)
    expect(warn.mock.calls.some((args) => String(args[0]).includes('tool_call_id=<c1> | the result could not be offloaded'))).toBe(true)

    const keep = fakeModel().respondWithTools([call('fetch_logs', 'c1')]).respond(new AIMessage('done'))
    await run(createAgent({ model: keep, tools: [returning('fetch_logs', LOG)], middleware: [contextOffloaderMiddleware({ storage: broken })] }))
    expect(toolMessages(keep.calls[1].messages).c1.content).toBe(LOG)

    const truncate = fakeModel().respondWithTools([call('fetch_logs', 'c1')]).respond(new AIMessage('done'))
    await run(createAgent({ model: truncate, tools: [returning('fetch_logs', LOG)], middleware: [contextOffloaderMiddleware({ storage: broken, onStorageError: 'truncate' })] }))
    const truncated = toolMessages(truncate.calls[1].messages).c1
    expect(truncated.content.length).toBeLessThan(8_000)
    expect(truncated.metadata[METADATA_KEY]).toMatchObject({ references: [], truncated: true })
  })

  test('shouldOffload and neverOffload see the tool call; includeRetrievalTool: false adds no tool', async () => {
    const seenCalls: any[] = []
    const offloading = contextOffloaderMiddleware({
      neverOffload: ['raw_logs'],
      includeRetrievalTool: false,
      shouldOffload: (toolUse, result) => {
        seenCalls.push({ toolUse, status: result.status })
        return toolUse.name === 'tiny' ? true : undefined
      },
    })
    expect(offloading.name).toBe(MIDDLEWARE_NAME)
    expect(offloading.tools).toEqual([])
    const model = fakeModel()
      .respondWithTools([call('raw_logs', 'c1'), call('tiny', 'c2', { q: 'x' })])
      .respond(new AIMessage('done'))
    await run(createAgent({ model, tools: [returning('raw_logs', LOG), tool(async () => 'a small answer', { name: 'tiny', description: 't', schema: { type: 'object', properties: { q: { type: 'string' } } } })], middleware: [offloading] }))
    const seen = toolMessages(model.calls[1].messages)
    expect(seen.c1.content).toBe(LOG)
    expect(seen.c2.content).toMatch(/^\[Offloaded: 1 blocks/)
    expect(seen.c2.content).not.toContain(RETRIEVE)
    expect(seenCalls).toEqual([{ toolUse: { name: 'tiny', toolUseId: 'c2', input: { q: 'x' } }, status: 'success' }])
  })
})

test('the subpath loads under require() and import, and the retrieval tool has the core\'s schema', async () => {
  const script = `const m = require(${JSON.stringify(`${ROOT}langchain.js`)}); const mw = m.contextOffloaderMiddleware(); process.stdout.write(JSON.stringify([mw.name, mw.tools.map((t) => t.name)]))`
  const loaded = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  expect(loaded.stderr).toBe('')
  expect(JSON.parse(loaded.stdout)).toEqual([MIDDLEWARE_NAME, [RETRIEVE]])
  const offloading = contextOffloaderMiddleware({ retrieval: 'extended' })
  const [retrieval] = offloading.tools as any[]
  expect(retrieval.schema).toEqual(offloading.offloader.retrievalTool.inputSchema)
  expect(retrieval.description).toBe(offloading.offloader.retrievalTool.description)
})
