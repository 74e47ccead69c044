// context-offloader/openai-agents in the OpenAI Agents SDK's own agent loop (`run()`,
// streamed and not), driven by the SDK's `ScriptedModel`: what the model receives on the
// turn after a tool call (the preview, not the raw result), the retrieval tool called
// from inside the loop, small and error results untouched, structured outputs, parallel
// calls, sessions, a restart with FileStorage, tools left as they are, and bad options.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test, vi } from 'vitest'
import { Agent, RunContext, run, tool, toolNamespace, webSearchTool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing'
import { FileStorage, InMemoryStorage, Offloader } from '../core.js'
import { logger } from '../lib/sdk.js'
import { DEFAULT_TOOL_ERROR_TEXT, offloadTools } from '../openai-agents.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RETRIEVE = 'retrieve_offloaded_content'
const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))
function tempDir() {
  const path = mkdtempSync(join(tmpdir(), 'co-openai-agents-'))
  cleanups.push(() => rmSync(path, { recursive: true, force: true }))
  return path
}

/** `n` numbered log lines for `q`: about 8 tokens a line by the heuristic. */
const rows = (n: number, q = 'a') => Array.from({ length: n }, (_, i) => `row ${i} of ${q}: status ok`).join('\n')
const SCHEMA = {
  type: 'object',
  properties: { q: { type: 'string' }, n: { type: 'integer' } },
  required: ['q', 'n'],
  additionalProperties: false,
} as const
/** A function tool answering `rows(n, q)`; `q: 'fail'` throws. */
const search = (extra: Record<string, unknown> = {}) =>
  tool({
    name: 'search',
    description: 'Searches the logs.',
    parameters: SCHEMA,
    execute: async ({ q, n }: any) => {
      if (q === 'fail') throw new Error('the log service is down')
      return rows(n, q)
    },
    ...extra,
  } as any)

/** The tool results in the model's input on call `i`, by call id. */
function resultsSeen(model: ScriptedModel, i: number): Record<string, any> {
  const items = model.calls[i].request.input as any[]
  return Object.fromEntries(items.filter((it) => it.type === 'function_call_result').map((it) => [it.callId, it.output]))
}
/** The text of a tool result as the model got it. */
const textOf = (output: any): string => (Array.isArray(output) ? output.map((o) => o.text ?? '').join('\n') : output.text)
/** Runs `body` with the package's warnings captured (and not printed); resolves with them. */
async function warningsOf(body: () => unknown): Promise<string> {
  const warn = vi.spyOn(logger, 'warn').mockImplementation(() => {})
  try {
    await body()
    return warn.mock.calls.map((args) => args.map(String).join(' ')).join('\n')
  } finally {
    warn.mockRestore()
  }
}
/** The references listed at the end of a preview. */
const referencesIn = (preview: string) => [...preview.matchAll(/^ {2}(\S+) \(/gm)].map((m) => m[1])

/** A model step that greps the first reference of call `callId`'s preview (as a strict-schema model sends it: every field, nulls for absent ones). */
const grepStep = (callId: string, pattern: string, newCallId = 'r1') =>
  modelResponder((call) => {
    const preview = textOf((call.request.input as any[]).find((i) => i.callId === callId && i.type === 'function_call_result').output)
    const reference = referencesIn(preview)[0]
    return [functionCall(RETRIEVE, { reference, pattern, line_range: null, context_lines: 0 }, { callId: newCallId })]
  })

async function runStreamed(agent: Agent<any, any>, input: string, context?: unknown) {
  const result = await run(agent, input, { stream: true, context } as any)
  for await (const _ of result as any);
  await (result as any).completed
  return result
}

describe('the model sees the preview on the next turn', () => {
  test.each([
    ['run()', false],
    ['run() streamed', true],
  ])('%s: large results offloaded, small and error results untouched, retrieval from inside the loop', async (_name, streamed) => {
    const model = new ScriptedModel([
      [
        functionCall('search', { q: 'big', n: 4000 }, { callId: 'c1' }),
        functionCall('search', { q: 'small', n: 3 }, { callId: 'c2' }),
        functionCall('search', { q: 'fail', n: 1 }, { callId: 'c3' }),
      ],
      grepStep('c1', 'row 3999 of big'),
      [assistantMessage('done')],
    ])
    const agent = new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([search()]) })
    const result = streamed ? await runStreamed(agent, 'go') : await run(agent, 'go')
    expect(result.finalOutput).toBe('done')
    expect(model.calls.map((c) => c.streamed)).toEqual([streamed, streamed, streamed])
    const seen = resultsSeen(model, 1)
    // The large one: the preview, with its head, a reference, and not the rest.
    expect(seen.c1.type).toBe('text')
    expect(seen.c1.text).toMatch(/^\[Offloaded: 1 blocks, ~\d[\d,]* tokens\]/)
    expect(seen.c1.text).toContain('row 0 of big: status ok')
    expect(seen.c1.text).not.toContain('row 3999 of big')
    expect(seen.c1.text.length).toBeLessThan(8000)
    expect(referencesIn(seen.c1.text)).toEqual([expect.stringContaining('c1_0')])
    // The small one and the error: exactly what the tool and the SDK answered.
    expect(seen.c2).toEqual({ type: 'text', text: rows(3, 'small') })
    expect(seen.c3).toEqual({ type: 'text', text: DEFAULT_TOOL_ERROR_TEXT })
    // The retrieval tool, called by the model with the reference it read, answers the line.
    expect(resultsSeen(model, 2).r1).toEqual({ type: 'text', text: '[1 match for /row 3999 of big/]\n\n> 4000| row 3999 of big: status ok' })
    // The run's items hold the preview too (the SDK keeps what the tool returned).
    const outputs = result.newItems.filter((i: any) => i.type === 'tool_call_output_item').map((i: any) => i.output)
    expect(outputs[0]).toBe(seen.c1.text)
  })

  test('the SDK error text is never offloaded, even when every result is forced out', async () => {
    const shouldOffload = vi.fn(() => true)
    const model = new ScriptedModel([
      [functionCall('search', { q: 'fail', n: 1 }, { callId: 'c1' }), functionCall('search', { q: 'tiny', n: 1 }, { callId: 'c2' })],
      [assistantMessage('done')],
    ])
    const tools = offloadTools([search()], { shouldOffload, offloadErrors: true, maxResultTokens: 2, previewTokens: 1 })
    await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go')
    const seen = resultsSeen(model, 1)
    expect(seen.c1).toEqual({ type: 'text', text: DEFAULT_TOOL_ERROR_TEXT })
    // The control: a result as small is offloaded when forced.
    expect(seen.c2.text).toMatch(/^\[Offloaded: /)
    expect(shouldOffload).toHaveBeenCalledTimes(1)
    expect(shouldOffload.mock.calls[0][0]).toEqual({ name: 'search', toolUseId: 'c2', input: { q: 'tiny', n: 1 } })
  })

  test('a custom errorFunction answer is an ordinary result (the SDK does not mark it as an error)', async () => {
    const model = new ScriptedModel([[functionCall('search', { q: 'fail', n: 1 }, { callId: 'c1' })], [assistantMessage('done')]])
    const tools = offloadTools([search({ errorFunction: () => `failed:\n${rows(2000, 'trace')}` })])
    await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go')
    expect(resultsSeen(model, 1).c1.text).toMatch(/^\[Offloaded: /)
  })

  test('parallel calls: each result lands at its own call, whatever order they finish in', async () => {
    const finished: string[] = []
    const slow = tool({
      name: 'slow',
      description: 'Slow or fast.',
      parameters: SCHEMA,
      execute: async ({ q, n }: any) => {
        await new Promise((r) => setTimeout(r, q === 'first' ? 80 : q === 'second' ? 40 : 0))
        finished.push(q)
        return rows(n, q)
      },
    } as any)
    const model = new ScriptedModel([
      [
        functionCall('slow', { q: 'first', n: 3000 }, { callId: 'p1' }),
        functionCall('slow', { q: 'second', n: 5 }, { callId: 'p2' }),
        functionCall('slow', { q: 'third', n: 3500 }, { callId: 'p3' }),
      ],
      grepStep('p1', 'row 2999 of first', 'r1'),
      grepStep('p3', 'row 3499 of third', 'r3'),
      [assistantMessage('done')],
    ])
    await runStreamed(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([slow]) }), 'go')
    expect(finished).toEqual(['third', 'second', 'first'])
    const seen = resultsSeen(model, 1)
    expect(seen.p1.text).toContain('row 0 of first')
    expect(seen.p1.text).not.toContain('third')
    expect(seen.p3.text).toContain('row 0 of third')
    expect(seen.p3.text).not.toContain('first')
    expect(referencesIn(seen.p1.text)[0]).toContain('p1_0')
    expect(referencesIn(seen.p3.text)[0]).toContain('p3_0')
    expect(seen.p2).toEqual({ type: 'text', text: rows(5, 'second') })
    expect(resultsSeen(model, 2).r1.text).toContain('> 3000| row 2999 of first')
    expect(resultsSeen(model, 3).r3.text).toContain('> 3500| row 3499 of third')
  })
})

describe('outputs the SDK sends as they are', () => {
  const PNG = Buffer.alloc(30_000, 9).toString('base64')
  const structured = (items: unknown) =>
    tool({ name: 'shots', description: 'Screenshots.', parameters: SCHEMA, execute: async () => items as any } as any)

  test('structured outputs: text and inline media stored, a URL image kept, the rest as the SDK sends it', async () => {
    const url = { type: 'image', image: { url: 'https://example.com/a.png' }, detail: 'low' }
    const items = [
      { type: 'text', text: rows(3000, 'caption') },
      { type: 'image', image: `data:image/png;base64,${PNG}` },
      url,
      { type: 'file', file: { data: Buffer.from(rows(500, 'pdf')), mediaType: 'application/pdf', filename: 'report.pdf' } },
    ]
    const model = new ScriptedModel([[functionCall('shots', { q: 'x', n: 1 }, { callId: 's1' })], [assistantMessage('done')]])
    await run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([structured(items)]) }), 'go')
    const seen = resultsSeen(model, 1).s1
    expect(seen.map((o: any) => o.type)).toEqual(['input_text', 'input_text', 'input_image', 'input_text'])
    expect(seen[0].text).toMatch(/^\[Offloaded: 4 blocks, /)
    expect(seen[0].text).not.toContain('row 2999 of caption')
    expect(seen[1].text).toMatch(/^\[image: png, 30000 bytes \| ref: \S+s1_1\]$/)
    expect(seen[2]).toEqual({ type: 'input_image', image: 'https://example.com/a.png', detail: 'low' })
    expect(seen[3].text).toMatch(/^\[document: pdf, report\.pdf, \d+ bytes \| ref: \S+s1_3\]$/)
    expect(JSON.stringify(seen)).not.toContain(PNG.slice(0, 200))
  })

  test('small structured outputs reach the model unchanged', async () => {
    const items = [
      { type: 'text', text: 'a chart' },
      { type: 'image', image: { data: Buffer.alloc(40, 1).toString('base64'), mediaType: 'image/png' } },
    ]
    const model = new ScriptedModel([[functionCall('shots', { q: 'x', n: 1 }, { callId: 's1' })], [assistantMessage('done')]])
    await run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([structured(items)]) }), 'go')
    expect(resultsSeen(model, 1).s1).toEqual([
      { type: 'input_text', text: 'a chart' },
      { type: 'input_image', image: `data:image/png;base64,${Buffer.alloc(40, 1).toString('base64')}` },
    ])
  })

  test('JSON data: a preview, and jq queries from inside the loop (extended retrieval)', async () => {
    const users = { users: Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `user ${i}`, role: i % 500 ? 'member' : 'admin' })) }
    const data = tool({ name: 'users', description: 'Users.', parameters: SCHEMA, execute: async () => users as any } as any)
    const model = new ScriptedModel([
      [functionCall('users', { q: 'x', n: 1 }, { callId: 'u1' })],
      modelResponder((call) => {
        const preview = textOf((call.request.input as any[]).find((i) => i.callId === 'u1' && i.type === 'function_call_result').output)
        const reference = referencesIn(preview)[0]
        const absent = { pattern: null, line_range: null, context_lines: null, page: null, list: null }
        return [functionCall(RETRIEVE, { ...absent, reference, query: '.users[] | select(.role == "admin") | .id' }, { callId: 'q1' })]
      }),
      [assistantMessage('done')],
    ])
    const tools = offloadTools([data], { retrieval: 'extended' })
    await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go')
    const preview = resultsSeen(model, 1).u1.text
    expect(preview).toMatch(/^\[Offloaded: /)
    expect(preview).not.toContain('user 1999')
    expect(resultsSeen(model, 2).q1.text).toContain('0\n500\n1000\n1500')
  })

  test('content the core refuses keeps the tool output as it was, with a warning', async () => {
    const items = [
      { type: 'text', text: rows(3000, 'kept') },
      { type: 'image', image: { data: PNG, mediaType: 'image/png/extra' } },
    ]
    const model = new ScriptedModel([[functionCall('shots', { q: 'x', n: 1 }, { callId: 's1' })], [assistantMessage('done')]])
    const warnings = await warningsOf(() => run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([structured(items)]) }), 'go'))
    const seen = resultsSeen(model, 1).s1
    expect(seen[0]).toEqual({ type: 'input_text', text: rows(3000, 'kept') })
    expect(warnings).toContain('tool=<shots>, tool_call_id=<s1> | the result could not be offloaded, keeping it as it is')
  })

  test('a storage failure keeps the whole result (onStorageError: keep)', async () => {
    const broken = { store: async () => Promise.reject(new Error('disk full')), retrieve: async () => Promise.reject(new Error('no')) }
    const model = new ScriptedModel([[functionCall('search', { q: 'big', n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
    const warnings = await warningsOf(() =>
      run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([search()], { storage: broken }) }), 'go'),
    )
    expect(warnings).toContain('disk full')
    expect(resultsSeen(model, 1).c1).toEqual({ type: 'text', text: rows(3000, 'big') })
  })
})

describe('sessions', () => {
  /** One run: the search tool offloads (call `c1`), then the model greps the reference `ref` (default: the one it just got). */
  async function offloadThenGrep(tools: any[], context: unknown, ref?: string) {
    const model = new ScriptedModel([
      [functionCall('search', { q: 'secret', n: 3000 }, { callId: 'c1' })],
      modelResponder((call) => {
        const seen = (call.request.input as any[]).find((i) => i.callId === 'c1' && i.type === 'function_call_result')
        const reference = ref ?? referencesIn(textOf(seen.output))[0]
        return [functionCall(RETRIEVE, { reference, pattern: 'row 7 of', line_range: null, context_lines: 0 }, { callId: 'r1' })]
      }),
      [assistantMessage('done')],
    ])
    await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go', { context } as any)
    return { reference: referencesIn(resultsSeen(model, 1).c1.text)[0], answer: resultsSeen(model, 2).r1.text as string }
  }

  test('opaque references from one session are not found in another (sessionId from the run context)', async () => {
    const tools = offloadTools([search()], { references: 'opaque', sessionId: (rc: RunContext<any>) => rc.context.user })
    const first = await offloadThenGrep(tools, { user: 'alice' })
    expect(first.reference).toMatch(/^ref_/)
    expect(first.answer).toContain('> 8| row 7 of secret')
    const other = await offloadThenGrep(tools, { user: 'bob' }, first.reference)
    expect(other.answer).toBe(`Error: reference not found: ${first.reference}`)
    const again = await offloadThenGrep(tools, { user: 'alice' }, first.reference)
    expect(again.answer).toContain('> 8| row 7 of secret')
  })

  test('tools built per request with a string session share one offloader', async () => {
    const offloader = new Offloader({ references: 'opaque' })
    const forRequest = (user: string) => offloadTools([search()], { offloader, sessionId: user })
    const first = await offloadThenGrep(forRequest('alice'), undefined)
    expect((await offloadThenGrep(forRequest('bob'), undefined, first.reference)).answer).toContain('reference not found')
    expect((await offloadThenGrep(forRequest('alice'), undefined, first.reference)).answer).toContain('> 8| row 7 of secret')
    expect(offloader.stats().offloads).toBe(3)
  })

  test('without a sessionId, runs share the offloader own session', async () => {
    const tools = offloadTools([search()], { references: 'opaque' })
    const first = await offloadThenGrep(tools, undefined)
    expect((await offloadThenGrep(tools, { anything: 1 }, first.reference)).answer).toContain('> 8| row 7 of secret')
  })

  test('a restart with FileStorage: a new offloader on the same directory answers the same session', async () => {
    const dir = tempDir()
    const before = offloadTools([search()], { storage: new FileStorage(dir), references: 'opaque', sessionId: 'thread-1' })
    const first = await offloadThenGrep(before, undefined)
    const after = offloadTools([search()], { storage: new FileStorage(dir), references: 'opaque', sessionId: 'thread-1' })
    expect((await offloadThenGrep(after, undefined, first.reference)).answer).toContain('> 8| row 7 of secret')
    const elsewhere = offloadTools([search()], { storage: new FileStorage(dir), references: 'opaque', sessionId: 'thread-2' })
    expect((await offloadThenGrep(elsewhere, undefined, first.reference)).answer).toContain('reference not found')
  })

  test('a sessionId function that fails keeps the result and answers the retrieval with an error', async () => {
    const tools = offloadTools([search()], { sessionId: () => 42 as any })
    const model = new ScriptedModel([
      [functionCall('search', { q: 'big', n: 3000 }, { callId: 'c1' })],
      [functionCall(RETRIEVE, { reference: 'mem_1_c1_0', pattern: null, line_range: null, context_lines: null }, { callId: 'r1' })],
      [assistantMessage('done')],
    ])
    const warnings = await warningsOf(() => run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go'))
    expect(warnings).toContain('sessionId(runContext) must return a string')
    expect(resultsSeen(model, 1).c1).toEqual({ type: 'text', text: rows(3000, 'big') })
    expect(resultsSeen(model, 2).r1.text).toBe('Error: offloadTools() option sessionId(runContext) must return a string (or undefined), got number 42')
  })
})

describe('what is wrapped and what is left as it is', () => {
  test('function tools keep their name, schema, approval and symbol-keyed properties; other tools are the same objects', async () => {
    const plain = search({ needsApproval: true })
    const [spaced] = toolNamespace({ name: 'logs', description: 'Log tools.', tools: [search()] })
    const hosted = webSearchTool()
    const sub = new Agent({ name: 'helper', instructions: 'x', model: new ScriptedModel([]) }).asTool({ toolName: 'helper', toolDescription: 'Helps.' })
    const typed = tool({
      name: 'typed',
      description: 'Typed output.',
      parameters: SCHEMA,
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false },
      execute: async () => ({ ok: true }),
    } as any)
    const out = offloadTools([plain, spaced, hosted, sub, typed] as any[])
    expect(out.map((t: any) => t.name)).toEqual(['search', 'search', 'web_search', 'helper', 'typed', RETRIEVE])
    expect(out[0]).not.toBe(plain)
    expect(out[0].invoke).not.toBe(plain.invoke)
    for (const key of ['type', 'name', 'description', 'parameters', 'strict', 'needsApproval', 'isEnabled', 'timeoutMs']) {
      expect((out[0] as any)[key]).toBe((plain as any)[key])
    }
    expect(Object.getOwnPropertySymbols(out[1])).toEqual(Object.getOwnPropertySymbols(spaced))
    expect(Object.getOwnPropertySymbols(out[1]).length).toBeGreaterThan(0)
    expect(out[2]).toBe(hosted)
    expect(out[3]).toBe(sub)
    expect(out[4]).toBe(typed)
    const retrieval: any = out[5]
    expect(retrieval.type).toBe('function')
    expect(retrieval.strict).toBe(true)
    expect(retrieval.parameters.required).toEqual(['reference', 'pattern', 'line_range', 'context_lines'])
    expect(retrieval.parameters.properties.pattern.anyOf).toContainEqual({ type: 'null' })
  })

  test('includeRetrievalTool: false adds no retrieval tool and leaves it out of the guidance', async () => {
    const tools = offloadTools([search()], { includeRetrievalTool: false })
    expect(tools.map((t: any) => t.name)).toEqual(['search'])
    const out = await (tools[0] as any).invoke(new RunContext(), JSON.stringify({ q: 'x', n: 3000 }))
    expect(out).toMatch(/^\[Offloaded: /)
    expect(out).not.toContain(RETRIEVE)
  })

  test('an approval interrupts the run, and the approved result is offloaded when the run resumes', async () => {
    const model = new ScriptedModel([[functionCall('search', { q: 'big', n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
    const agent = new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([search({ needsApproval: true })]) })
    const first = await run(agent, 'go')
    expect(first.interruptions).toHaveLength(1)
    first.state.approve(first.interruptions[0])
    const resumed = await run(agent, first.state)
    expect(resumed.finalOutput).toBe('done')
    expect(resultsSeen(model, 1).c1.text).toMatch(/^\[Offloaded: /)
  })

  test('invoke called directly (no tool call details) still offloads', async () => {
    const [wrapped] = offloadTools([search()])
    const out = await (wrapped as any).invoke(new RunContext(), JSON.stringify({ q: 'x', n: 3000 }))
    expect(out).toMatch(/^\[Offloaded: /)
    expect(referencesIn(out)[0]).toMatch(/call_[0-9a-f-]{36}_0$/)
  })
})

describe('bad input from JavaScript', () => {
  test.each<[string, () => unknown, RegExp]>([
    ['tools not an array', () => offloadTools({} as any), /^offloadTools\(\) takes an array of tools, got an object$/],
    ['a null tool', () => offloadTools([null] as any), /tools\[0\] must be a tool of @openai\/agents/],
    ['a function tool without invoke', () => offloadTools([{ type: 'function', name: 'x' }] as any), /tools\[0\] \('x'\) is a function tool without an invoke/],
    ['the retrieval tool passed in', () => offloadTools(offloadTools([search()])), /tools\[1\] is already named 'retrieve_offloaded_content'/],
    ['options null', () => offloadTools([], null as any), /options must be an object/],
    ['sessionId a number', () => offloadTools([], { sessionId: 7 as any }), /option sessionId must be a string or a function \(runContext\) => string, got number 7/],
    ['sessionId empty', () => offloadTools([], { sessionId: '' }), /option sessionId must be a non-empty string/],
    ['sessionId with a lone surrogate', () => offloadTools([], { sessionId: 'a\ud800' }), /option sessionId must be a well-formed string/],
    ['maxResultTokens negative', () => offloadTools([], { maxResultTokens: -1 }), /maxResultTokens/],
    ['preview unknown', () => offloadTools([], { preview: 'tail' as any }), /preview/],
    ['offloader not an Offloader', () => offloadTools([], { offloader: {} as any }), /option offloader must be an Offloader/],
    ['offloader with core options', () => offloadTools([], { offloader: new Offloader(), maxResultTokens: 10, storage: new InMemoryStorage() }), /options storage, maxResultTokens cannot be given with offloader: pass them to new Offloader\(\) instead/],
  ])('%s', (_name, call, message) => {
    expect(call).toThrow(message)
  })

  test('the retrieval tool reads nulls as absent and answers bad input with an error naming the field', async () => {
    const [, retrieval] = offloadTools([search()]) as any[]
    const ask = (input: object) => retrieval.invoke(new RunContext(), JSON.stringify(input))
    expect(await ask({ reference: null, pattern: null, line_range: null, context_lines: null })).toBe('Error: invalid input: reference is required')
    expect(await ask({ reference: 'mem_9_x_0', pattern: null, line_range: { start: null, end: null }, context_lines: null })).toBe(
      'Error: reference not found: mem_9_x_0',
    )
    expect(await ask({ reference: 'mem_9_x_0', pattern: null, line_range: null, context_lines: -1 })).toBe(
      'Error: invalid input: context_lines must be a whole number of at least 0',
    )
  })

  test('unknown option names are warned about with the closest known one', async () => {
    const warnings = await warningsOf(() => offloadTools([], { sesionId: 's' } as any))
    expect(warnings).toBe('offloadTools(): unknown option "sesionId" (did you mean "sessionId"?)')
  })
})

describe('loading', () => {
  test.each([
    ['Node 22', join(ROOT, 'node_modules/.bin/node')],
    ['the node on PATH', 'node'],
  ])('require() and import of the subpath work on %s', (_name, node) => {
    const script =
      "const a = require('context-offloader/openai-agents');" +
      "import('context-offloader/openai-agents').then((b) => { if (a.offloadTools !== b.offloadTools) throw new Error('two copies'); console.log(typeof a.offloadTools) })"
    const child = spawnSync(node, ['-e', script], { cwd: ROOT, encoding: 'utf8' })
    expect(child.stderr).not.toMatch(/Error/)
    expect(child.stdout.trim()).toBe('function')
  })
})
