// The Vercel AI SDK adapter (`context-offloader/ai`), run twice: against `ai` 7 with its
// MockLanguageModelV4 and against `ai` 6 (installed as `ai-v6`, and given to the adapter
// as `ai`) with its MockLanguageModelV3. Every scenario drives the SDK's real loop
// (generateText / streamText with stopWhen, convertToModelMessages) and asserts what the
// mock model was sent on the step after the tool call.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { type Kit, callOptions, load, prompts, referenceIn, scripted, text, toolCall, toolOutputs } from './helpers/ai-kit.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))
function tempDir() {
  const path = mkdtempSync(join(tmpdir(), 'co-ai-'))
  cleanups.push(() => rmSync(path, { recursive: true, force: true }))
  return path
}
const artifactFiles = (dir: string) => readdirSync(dir).filter((f) => /^\d+_\d+_/.test(f))

const logLines = (n: number, tag = 'x') => Array.from({ length: n }, (_, i) => `${i} ${i % 7 ? 'INFO' : 'ERROR'} ${tag} request ${i * 37} done`).join('\n')
const records = (n: number) => ({ users: Array.from({ length: n }, (_, i) => ({ id: i, name: `user ${i}`, role: i % 40 ? 'member' : 'admin' })) })


/** A tool of JSON Schema input (no zod), executing `execute`. */
function tool(kit: Kit, execute: (input: any, options: any) => any, extra: object = {}) {
  return kit.ai.tool({ inputSchema: kit.ai.jsonSchema({ type: 'object', properties: { q: { type: 'string' } } }), execute, ...extra })
}

for (const version of [7, 6] as const) {
  describe(`ai ${version}`, () => {
    let kit: Kit
    beforeAll(async () => {
      kit = await load(version)
    })

    test('a large result reaches the model as the preview, steps keep it raw, and the model retrieves lines from inside the loop', async () => {
      const raw = logLines(3000)
      const offloader = new kit.core.Offloader()
      const tools = kit.offloadTools({ logs: tool(kit, async () => raw) }, { offloader })
      let ref = ''
      const model = scripted(kit, [
        () => [toolCall('c1', 'logs', { q: 'today' })],
        (prompt) => {
          ref = referenceIn(toolOutputs(prompt).c1.value)
          return [toolCall('c2', 'retrieve_offloaded_content', { reference: ref, pattern: '^1234 ', context_lines: 1 })]
        },
        () => [text('done')],
      ])
      const result = await kit.ai.generateText({ model, tools, prompt: 'look at the logs', stopWhen: kit.ai.stepCountIs(5) })
      expect(result.text).toBe('done')
      const [, second, third] = prompts(model)
      const preview = toolOutputs(second).c1
      expect(preview.type).toBe('text')
      expect(preview.value).toMatch(/^\[Offloaded: 1 blocks, ~[\d,]+ tokens\]/)
      expect(preview.value).toContain('0 ERROR x request 0 done')
      expect(preview.value).not.toContain('2999 ')
      expect(preview.value.length).toBeLessThan(raw.length / 10)
      // The app keeps the raw output; the model got the retrieval tool's answer.
      expect(result.steps[0].toolResults[0].output).toBe(raw)
      const answer = toolOutputs(third).c2
      expect(answer).toEqual({ type: 'text', value: await offloader.retrievalTool.execute({ reference: ref, pattern: '^1234 ', context_lines: 1 }) })
      expect(answer.value).toContain('1234 INFO x request 45658 done')
      expect(answer.value).toContain('1233 ')
      // The retrieval tool went to the model with the core's JSON Schema.
      const sent = model.doGenerateCalls[0].tools.find((t: any) => t.name === 'retrieve_offloaded_content')
      expect(sent.inputSchema).toEqual(offloader.retrievalTool.inputSchema)
      expect(sent.description).toBe(offloader.retrievalTool.description)
      expect(offloader.stats().offloads).toBe(1)
    })

    test('small results, and tools in neverOffload, reach the model exactly as without the adapter', async () => {
      const run = async (wrap: boolean) => {
        const base = {
          note: tool(kit, async () => 'a short note'),
          row: tool(kit, async () => ({ id: 7, when: new Date(Date.UTC(2026, 0, 1)), tags: ['a', undefined] })),
          raw: tool(kit, async () => logLines(3000)),
        }
        const tools = wrap ? kit.offloadTools(base, { neverOffload: ['raw'] }) : base
        const model = scripted(kit, [() => [toolCall('n1', 'note', {}), toolCall('r1', 'row', {}), toolCall('w1', 'raw', {})], () => [text('ok')]])
        await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
        return toolOutputs(prompts(model)[1])
      }
      const wrapped = await run(true)
      expect(JSON.parse(JSON.stringify(wrapped))).toEqual(JSON.parse(JSON.stringify(await run(false))))
      expect(wrapped.n1).toEqual({ type: 'text', value: 'a short note' })
      expect(wrapped.w1.value.length).toBe(logLines(3000).length)
    })

    test('a large JSON output is offloaded as JSON and previewed', async () => {
      const data = records(600)
      const offloader = new kit.core.Offloader()
      const tools = kit.offloadTools({ users: tool(kit, async () => data) }, { offloader })
      const model = scripted(kit, [() => [toolCall('j1', 'users', {})], () => [text('ok')]])
      const result = await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const preview = toolOutputs(prompts(model)[1]).j1
      expect(preview.type).toBe('text')
      expect(preview.value).toMatch(/^\[Offloaded: 1 blocks/)
      expect(preview.value).toContain('"users": [')
      expect(result.steps[0].toolResults[0].output).toBe(data)
      const stored = await offloader.storage.retrieve(referenceIn(preview.value))
      expect(stored.contentType).toBe('application/json')
      expect(await offloader.retrievalTool.execute({ reference: referenceIn(preview.value) })).toBe(JSON.stringify(data, null, 2))
    })

    test('content outputs: the tool’s own toModelOutput runs first, media is stored behind placeholders, URL parts stay', async () => {
      const png = Buffer.from(new Uint8Array(3000).map((_, i) => i % 251)).toString('base64')
      const big = logLines(2000, 'shot')
      const parts =
        kit.version === 7
          ? [
              { type: 'text', text: big },
              { type: 'file', mediaType: 'image/png', data: { type: 'data', data: png } },
              { type: 'file', mediaType: 'image', data: { type: 'url', url: new URL('https://example.com/a.png') } },
              { type: 'file', mediaType: 'application/pdf', filename: 'r.pdf', data: { type: 'data', data: png } },
            ]
          : [
              { type: 'text', text: big },
              { type: 'image-data', data: png, mediaType: 'image/png' },
              { type: 'image-url', url: 'https://example.com/a.png' },
              { type: 'file-data', data: png, mediaType: 'application/pdf', filename: 'r.pdf' },
            ]
      const toModelOutput = vi.fn(({ output }: any) => ({ type: 'content', value: output.parts }))
      const offloader = new kit.core.Offloader()
      const tools = kit.offloadTools({ shot: tool(kit, async () => ({ parts }), { toModelOutput }) }, { offloader })
      const model = scripted(kit, [() => [toolCall('m1', 'shot', { q: 'a' })], () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      expect(toModelOutput).toHaveBeenCalledWith({ toolCallId: 'm1', input: { q: 'a' }, output: { parts } })
      const seen = toolOutputs(prompts(model)[1]).m1
      expect(seen.type).toBe('content')
      expect(seen.value).toHaveLength(4)
      expect(seen.value[0].text).toMatch(/^\[Offloaded: 4 blocks/)
      expect(seen.value[0].text).not.toContain('1999 ')
      expect(seen.value[1]).toEqual({ type: 'text', text: expect.stringMatching(/^\[image: png, 3000 bytes \| ref: mem_\d+_m1_1\]$/) })
      expect(seen.value[3]).toEqual({ type: 'text', text: expect.stringMatching(/^\[document: pdf, r\.pdf, 3000 bytes \| ref: mem_\d+_m1_3\]$/) })
      const url = seen.value[2]
      if (kit.version === 7) expect(String(url.data.url)).toBe('https://example.com/a.png')
      else expect(url).toEqual({ type: 'image-url', url: 'https://example.com/a.png' })
      const image = await offloader.storage.retrieve(/ref: (\S+)\]/.exec(seen.value[1].text)![1])
      expect(Buffer.from(image.content).toString('base64')).toBe(png)
    })

    test('errors reach the model as the SDK makes them, even when large and with offloadErrors', async () => {
      const message = 'E'.repeat(40_000)
      const offloader = new kit.core.Offloader({ offloadErrors: true })
      const failing = tool(kit, async () => {
        throw new Error(message)
      })
      const tools = kit.offloadTools({ failing }, { offloader })
      const model = scripted(kit, [() => [toolCall('e1', 'failing', {})], () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const seen = toolOutputs(prompts(model)[1]).e1
      expect(seen.type).toBe('error-text')
      expect(seen.value).toContain(message)
      expect(offloader.stats().offloads).toBe(0)
    })

    test('parallel tool calls each get their own preview and references', async () => {
      const offloader = new kit.core.Offloader()
      const finished: string[] = []
      const slow = tool(kit, async ({ q }: any) => {
        await new Promise((r) => setTimeout(r, q === 'a' ? 40 : q === 'b' ? 0 : 20))
        finished.push(q)
        return logLines(2500, `tag-${q}`)
      })
      const tools = kit.offloadTools({ slow }, { offloader })
      const model = scripted(kit, [() => ['a', 'b', 'c'].map((q) => toolCall(`p${q}`, 'slow', { q })), () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      expect(finished).toEqual(['b', 'c', 'a'])
      const seen = toolOutputs(prompts(model)[1])
      const refs = new Set<string>()
      for (const q of ['a', 'b', 'c']) {
        expect(seen[`p${q}`].value).toContain(`0 ERROR tag-${q} request 0 done`)
        const ref = referenceIn(seen[`p${q}`].value)
        refs.add(ref)
        expect(await offloader.retrievalTool.execute({ reference: ref, line_range: { start: 2500, end: 2500 } })).toContain(`2499 ERROR tag-${q} request`)
      }
      expect(refs.size).toBe(3)
      expect(offloader.stats().offloads).toBe(3)
    })

    test('streamText shows the same preview as generateText and stores the result once', async () => {
      const raw = logLines(3000)
      const previewOf = async (stream: boolean) => {
        const offloader = new kit.core.Offloader()
        const tools = kit.offloadTools({ logs: tool(kit, async () => raw) }, { offloader })
        const toModelOutput = vi.spyOn(tools.logs, 'toModelOutput')
        const offloadResult = vi.spyOn(offloader, 'offloadResult')
        const model = scripted(kit, [() => [toolCall('s1', 'logs', {})], () => [text('ok')]])
        if (stream) {
          const run = kit.ai.streamText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
          expect(await run.text).toBe('ok')
          expect((await run.steps)[0].toolResults[0].output).toBe(raw)
        } else {
          await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
        }
        expect(toModelOutput).toHaveBeenCalled()
        expect(offloader.stats()).toMatchObject({ offloads: 1, blocksStored: 1 })
        // Asked again for the same output, the adapter answers from memory.
        expect(offloadResult).toHaveBeenCalledTimes(1)
        return { preview: toolOutputs(prompts(model)[1]).s1, asked: toModelOutput.mock.calls.length }
      }
      const streamed = await previewOf(true)
      const generated = await previewOf(false)
      // ai 6 streamText asks toModelOutput twice for one result: it is stored once all the same.
      if (kit.version === 6) expect(streamed.asked).toBe(2)
      expect(streamed.preview.value).toMatch(/^\[Offloaded: 1 blocks/)
      const sameRefs = (s: string) => s.replace(/mem_\d+_/g, 'mem_N_')
      expect(sameRefs(streamed.preview.value)).toBe(sameRefs(generated.preview.value))
    })

    test('a tool call id seen again with another output is offloaded anew', async () => {
      const offloader = new kit.core.Offloader()
      let n = 0
      const tools = kit.offloadTools({ logs: tool(kit, async () => logLines(3000, `run-${++n}`)) }, { offloader })
      const seen = []
      for (let run = 0; run < 2; run++) {
        const model = scripted(kit, [() => [toolCall('same-id', 'logs', {})], () => [text('ok')]])
        await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
        seen.push(toolOutputs(prompts(model)[1])['same-id'].value)
      }
      expect(seen[0]).toContain('0 ERROR run-1 request')
      expect(seen[1]).toContain('0 ERROR run-2 request')
      expect(offloader.stats().offloads).toBe(2)
    })

    test('an execute that streams preliminary results: the final one is offloaded', async () => {
      const raw = logLines(3000)
      const progressive = tool(kit, async function* () {
        yield 'working'
        yield raw
      })
      const tools = kit.offloadTools({ progressive })
      const model = scripted(kit, [() => [toolCall('g1', 'progressive', {})], () => [text('ok')]])
      const result = await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      expect(result.steps[0].toolResults[0].output).toBe(raw)
      expect(toolOutputs(prompts(model)[1]).g1.value).toMatch(/^\[Offloaded: 1 blocks/)
    })

    test('sessions: opaque references from one session are not found in another; tool sets share one offloader', async () => {
      const offloader = new kit.core.Offloader({ references: 'opaque' })
      const sessionId = (options: any) => (options.context ?? options.experimental_context)?.sessionId
      const tools = {
        ...kit.offloadTools({ logs: tool(kit, async ({ q }: any) => logLines(3000, q)) }, { offloader, sessionId }),
        ...kit.offloadTools({ users: tool(kit, async () => records(600)) }, { offloader, sessionId }),
      }
      let aliceRef = ''
      const first = scripted(kit, [() => [toolCall('a1', 'logs', { q: 'alice' })], (p) => ((aliceRef = referenceIn(toolOutputs(p).a1.value)), [text('ok')])])
      await kit.ai.generateText({ model: first, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3), ...kit.context(tools, { sessionId: 'alice' }) })
      expect(aliceRef).toMatch(/^ref_[A-Za-z0-9_-]{16}$/)
      const probe = (session: string) => {
        const model = scripted(kit, [
          () => [toolCall('u1', 'users', {}), toolCall('r1', 'retrieve_offloaded_content', { reference: aliceRef, line_range: { start: 1, end: 1 } })],
          (p) => [toolCall('r2', 'retrieve_offloaded_content', { reference: referenceIn(toolOutputs(p).u1.value), query: null, pattern: 'admin', context_lines: 0 })],
          () => [text('ok')],
        ])
        return kit.ai
          .generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(4), ...kit.context(tools, { sessionId: session }) })
          .then(() => ({ first: toolOutputs(prompts(model)[1]), second: toolOutputs(prompts(model)[2]) }))
      }
      const bob = await probe('bob')
      expect(bob.first.r1.value).toBe(`Error: reference not found: ${aliceRef}`)
      expect(bob.second.r2.value).toMatch(/^\[\d+ matches for \/admin\/\]/)
      const alice = await probe('alice')
      expect(alice.first.r1.value).toContain('0 ERROR alice request 0 done')
      // A string session, on tool sets built per request, is the same session.
      const perRequest = kit.offloadTools({}, { offloader, sessionId: 'alice' })
      expect(await perRequest.retrieve_offloaded_content.execute({ reference: aliceRef, line_range: { start: 2, end: 2 } }, callOptions('x'))).toContain('1 INFO alice')
      expect(await kit.offloadTools({}, { offloader }).retrieve_offloaded_content.execute({ reference: aliceRef }, callOptions('y'))).toBe(
        `Error: reference not found: ${aliceRef}`,
      )
    })

    test('a conversation re-sent through convertToModelMessages shows the same preview and stores nothing again, also after a restart', async () => {
      const dir = tempDir()
      const raw = logLines(3000)
      const options = { references: 'opaque', sessionId: 'chat-1' } as const
      const logs = tool(kit, async () => raw)
      const offloader = new kit.core.Offloader({ storage: new kit.core.FileStorage(dir), references: 'opaque' })
      const tools = kit.offloadTools({ logs }, { offloader, sessionId: options.sessionId })
      const model = scripted(kit, [() => [toolCall('call_1', 'logs', { q: 'a' })], () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const seen = toolOutputs(prompts(model)[1]).call_1
      expect(artifactFiles(dir)).toHaveLength(1)
      const ui = [
        { id: 'u', role: 'user', parts: [{ type: 'text', text: 'p' }] },
        { id: 'a', role: 'assistant', parts: [{ type: 'tool-logs', toolCallId: 'call_1', state: 'output-available', input: { q: 'a' }, output: raw }, { type: 'text', text: 'ok' }] },
      ]
      const resent = async (tools: any, messages: any[] = ui) => toolOutputs(await kit.ai.convertToModelMessages(messages, { tools })).call_1
      // The same process: the same tool set, one built per request, and a JSON round trip of the messages.
      expect(await resent(tools)).toEqual(seen)
      expect(await resent(kit.offloadTools({ logs }, { offloader, sessionId: 'chat-1' }), JSON.parse(JSON.stringify(ui)))).toEqual(seen)
      expect(artifactFiles(dir)).toHaveLength(1)
      // After a restart: a new offloader on the same directory.
      const restarted = kit.offloadTools({ logs }, { storage: new kit.core.FileStorage(dir), ...options })
      expect(await resent(restarted, JSON.parse(JSON.stringify(ui)))).toEqual(seen)
      expect(artifactFiles(dir)).toHaveLength(1)
      const ref = referenceIn(seen.value)
      expect(await restarted.retrieve_offloaded_content.execute({ reference: ref, line_range: { start: 3000, end: 3000 } }, callOptions('r'))).toContain('2999 INFO')
      // Without the session (a function sessionId cannot be asked in a re-send after a restart): stored again, under a session no retrieval reads.
      const unknown = kit.offloadTools({ logs }, { storage: new kit.core.FileStorage(dir), references: 'opaque', sessionId: () => 'never-asked' })
      const again = await resent(unknown)
      expect(artifactFiles(dir)).toHaveLength(2)
      expect(referenceIn(again.value)).not.toBe(ref)
    })

    test('with the defaults (no sessionId, storage references), a re-send after a restart stores nothing again', async () => {
      const dir = tempDir()
      const raw = logLines(3000)
      const logs = tool(kit, async () => raw)
      const tools = kit.offloadTools({ logs }, { storage: new kit.core.FileStorage(dir) })
      const model = scripted(kit, [() => [toolCall('call_d', 'logs', { q: 'a' })], () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const seen = toolOutputs(prompts(model)[1]).call_d
      expect(seen.value).toContain('[Stored references:]')
      const ui = [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-logs', toolCallId: 'call_d', state: 'output-available', input: { q: 'a' }, output: raw }] }]
      const restarted = kit.offloadTools({ logs }, { storage: new kit.core.FileStorage(dir) })
      expect(toolOutputs(await kit.ai.convertToModelMessages(ui, { tools: restarted })).call_d).toEqual(seen)
      expect(artifactFiles(dir)).toHaveLength(1)
    })

    test('a function sessionId: a re-send in the same process finds the session the call ran in', async () => {
      const offloader = new kit.core.Offloader({ references: 'opaque' })
      const sessionId = (options: any) => (options.context ?? options.experimental_context)?.chat
      const logs = tool(kit, async () => logLines(3000))
      const tools = kit.offloadTools({ logs }, { offloader, sessionId })
      const model = scripted(kit, [() => [toolCall('f1', 'logs', {})], () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3), ...kit.context(tools, { chat: 'c-9' }) })
      const seen = toolOutputs(prompts(model)[1]).f1
      const ui = [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-logs', toolCallId: 'f1', state: 'output-available', input: {}, output: logLines(3000) }] }]
      const other = kit.offloadTools({ logs }, { offloader, sessionId })
      expect(toolOutputs(await kit.ai.convertToModelMessages(ui, { tools: other })).f1).toEqual(seen)
      expect(offloader.stats().offloads).toBe(1)
      const ref = referenceIn(seen.value)
      expect(await other.retrieve_offloaded_content.execute({ reference: ref, line_range: { start: 1, end: 1 } }, callOptions('r', { chat: 'c-9' }))).toContain('0 ERROR')
    })

    test('bad options fail at once with errors naming the option; null means absent', () => {
      const logs = tool(kit, async () => 'x')
      const bad: Array<[() => unknown, RegExp]> = [
        [() => kit.offloadTools(null), /offloadTools tools must be an object of AI SDK tools.*got null/],
        [() => kit.offloadTools([logs]), /offloadTools tools must be an object/],
        [() => kit.offloadTools({ logs: 5 }), /offloadTools tools\.logs must be an AI SDK tool \(an object\), got number 5/],
        [() => kit.offloadTools({ logs }, 'opaque'), /offloadTools options must be an object such as \{ sessionId, maxResultTokens \}, got 'opaque'/],
        [() => kit.offloadTools({ logs }, { sessionId: 42 }), /offloadTools options\.sessionId must be a string or a function.*got number 42/],
        [() => kit.offloadTools({ logs }, { sessionId: '' }), /offloadTools options\.sessionId must be a non-empty string/],
        [() => kit.offloadTools({ logs }, { offloader: {} }), /offloadTools options\.offloader must be an Offloader/],
        [() => kit.offloadTools({ logs }, { offloader: new kit.core.Offloader(), maxResultTokens: 10 }), /"maxResultTokens" cannot be given with options\.offloader/],
        [() => kit.offloadTools({ logs }, { maxResultTokens: -1 }), /maxResultTokens/],
        [() => kit.offloadTools({ logs }, { references: 'secret' }), /references/],
        [() => kit.offloadTools(kit.offloadTools({ logs })), /already has a tool named retrieve_offloaded_content/],
      ]
      for (const [call, message] of bad) expect(call).toThrow(message)
      const tools = kit.offloadTools({ logs }, { sessionId: null, offloader: null, maxResultTokens: null, previewTokens: undefined })
      expect(Object.keys(tools)).toEqual(['logs', 'retrieve_offloaded_content'])
      expect(Object.keys(kit.offloadTools({ logs }, { includeRetrievalTool: false }))).toEqual(['logs'])
      // Provider tools are the provider's: returned as they are.
      const web = { type: 'provider', id: 'acme.web_search', args: {}, inputSchema: kit.ai.jsonSchema({ type: 'object' }) }
      expect(kit.offloadTools({ web }).web).toBe(web)
    })

    test('a sessionId function that returns no string fails the call (the model is told) and runs nothing', async () => {
      const execute = vi.fn(async () => 'x')
      const tools = kit.offloadTools({ logs: tool(kit, execute) }, { sessionId: () => 7 })
      const model = scripted(kit, [() => [toolCall('b1', 'logs', {})], () => [text('ok')]])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const seen = toolOutputs(prompts(model)[1]).b1
      expect(seen.type).toBe('error-text')
      expect(seen.value).toMatch(/offloadTools options\.sessionId returned number 7: it must return a non-empty, well-formed string/)
      expect(execute).not.toHaveBeenCalled()
    })

    test('the retrieval tool: null fields from strict-schema models mean absent', async () => {
      const offloader = new kit.core.Offloader({ retrieval: 'extended' })
      const r = await offloader.offloadResult({ toolName: 'logs', toolCallId: 'z', content: logLines(3000) })
      const ref = r.references[0].reference
      const tools = kit.offloadTools({}, { offloader })
      const model = scripted(kit, [
        () => [
          toolCall('n1', 'retrieve_offloaded_content', { reference: ref, pattern: 'ERROR x request 259\\b', line_range: null, context_lines: null, query: null, page: null, list: null }),
          toolCall('n2', 'retrieve_offloaded_content', { reference: ref, pattern: 'ERROR x request 259\\b' }),
          toolCall('n3', 'retrieve_offloaded_content', { reference: ref, page: 0 }),
        ],
        () => [text('ok')],
      ])
      await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const seen = toolOutputs(prompts(model)[1])
      expect(seen.n1.value).toContain('7 ERROR x request 259 done')
      expect(seen.n1).toEqual(seen.n2)
      expect(seen.n3.value).toBe('Error: invalid input: page must be a whole number of at least 1')
    })

    test('what cannot be offloaded is kept as it was: a storage that fails, content the core refuses', async () => {
      const raw = logLines(3000)
      const broken = { store: async () => Promise.reject(new Error('disk full')), retrieve: async () => Promise.reject(new Error('nothing')) }
      const warn = vi.spyOn(kit.logger, 'warn').mockImplementation(() => {})
      try {
        const failing = kit.offloadTools({ logs: tool(kit, async () => raw) }, { storage: broken })
        const refused = kit.offloadTools({
          shot: tool(kit, async () => 'x', {
            toModelOutput: () => ({ type: 'content', value: [{ type: 'text', text: raw }, { type: 'image-data', data: 'AAAA', mediaType: 'png' }] }),
          }),
        })
        const model = scripted(kit, [() => [toolCall('k1', 'logs', {}), toolCall('k2', 'shot', {})], () => [text('ok')]])
        await kit.ai.generateText({ model, tools: { ...failing, ...refused }, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
        const seen = toolOutputs(prompts(model)[1])
        expect(seen.k1).toEqual({ type: 'text', value: raw })
        expect(seen.k2.type).toBe('content')
        expect(seen.k2.value[0]).toEqual({ type: 'text', text: raw })
        expect(warn.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/tool=<shot>, tool_call_id=<k2> \| the result could not be offloaded/)
      } finally {
        warn.mockRestore()
      }
    })
  })
}

describe('loading', () => {
  test('context-offloader/ai loads, from import and require, where only `ai` is installed (no Strands SDK)', async () => {
    const { cpSync, mkdirSync, symlinkSync, writeFileSync } = await import('node:fs')
    const { spawnSync } = await import('node:child_process')
    const { fileURLToPath } = await import('node:url')
    const root = fileURLToPath(new URL('..', import.meta.url))
    const project = tempDir()
    const pkgDir = join(project, 'node_modules', 'context-offloader')
    mkdirSync(pkgDir, { recursive: true })
    for (const f of ['package.json', 'ai.js', 'ai.d.ts', 'core.js', 'core.d.ts', 'index.js', 'binding.cjs', 'lib']) cpSync(join(root, f), join(pkgDir, f), { recursive: true })
    for (const f of readdirSync(root).filter((f) => f.endsWith('.node'))) cpSync(join(root, f), join(pkgDir, f))
    // `ai` (with its own dependencies, resolved from where it really is).
    symlinkSync(join(root, 'node_modules', 'ai'), join(project, 'node_modules', 'ai'), 'dir')
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    const script = `
      import { offloadTools } from 'context-offloader/ai'
      let sdk = 'absent'
      try { await import('@strands-agents/sdk'); sdk = 'present' } catch {}
      const tools = offloadTools({ logs: { inputSchema: {}, execute: async () => 'line\\n'.repeat(20000) } })
      const output = await tools.logs.toModelOutput({ toolCallId: 'c1', input: {}, output: 'line\\n'.repeat(20000) })
      console.log(JSON.stringify({ sdk, preview: output.value.split('\\n')[0], tools: Object.keys(tools) }))
    `
    writeFileSync(join(project, 'main.mjs'), script)
    writeFileSync(join(project, 'main.cjs'), `const { offloadTools } = require('context-offloader/ai'); console.log(typeof offloadTools)`)
    const run = (file: string) => spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } })
    const esm = run('main.mjs')
    expect(esm.status, esm.stderr).toBe(0)
    expect(JSON.parse(esm.stdout)).toEqual({ sdk: 'absent', preview: '[Offloaded: 1 blocks, ~25,000 tokens]', tools: ['logs', 'retrieve_offloaded_content'] })
    const cjs = run('main.cjs')
    expect(cjs.status, cjs.stderr).toBe(0)
    expect(cjs.stdout.trim()).toBe('function')
  })
})
