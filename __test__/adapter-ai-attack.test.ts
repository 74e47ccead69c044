// The Vercel AI SDK adapter (`context-offloader/ai`) against tool sets and loads the main
// suite does not cover: tools whose properties are inherited or named like Object's own,
// model outputs that are never offloaded, tool sets without a session next to ones with
// one, and calls whose session must outlast many other calls. Run against `ai` 7 and
// `ai` 6 (installed as `ai-v6`), with the SDK's own loop and mock models.
import { beforeAll, describe, expect, test, vi } from 'vitest'
import { type Kit, callOptions, load, referenceIn, scripted, toolCall, toolOutputs } from './helpers/ai-kit.js'
import { gc } from './helpers/heap.js'

const logLines = (n: number, tag = 'x') => Array.from({ length: n }, (_, i) => `${i} ${tag} request ${i * 37} done`).join('\n')

/** A full garbage collection, between turns of the event loop (so WeakRefs can clear). */
async function collect() {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 5))
    gc()
  }
}

for (const version of [7, 6] as const) {
  describe(`ai ${version}`, () => {
    let kit: Kit
    let schema: any
    beforeAll(async () => {
      kit = await load(version)
      schema = kit.ai.jsonSchema({ type: 'object', properties: {} })
    })

    test('a tool named __proto__ stays in the tool set, and the set keeps its plain prototype', async () => {
      const tools: Record<string, any> = {}
      Object.defineProperty(tools, '__proto__', { value: { inputSchema: schema, execute: async () => 'from proto' }, enumerable: true, writable: true, configurable: true })
      tools.other = { inputSchema: schema, execute: async () => 'other' }
      const wrapped = kit.offloadTools(tools)
      expect(Object.getPrototypeOf(wrapped)).toBe(Object.prototype)
      expect(Object.keys(wrapped)).toEqual(['__proto__', 'other', 'retrieve_offloaded_content'])
      const model = scripted(kit, [[toolCall('p1', '__proto__')], [{ type: 'text', text: 'ok' }]])
      await kit.ai.generateText({ model, tools: wrapped, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      expect(toolOutputs(model.doGenerateCalls[1].prompt).p1).toEqual({ type: 'text', value: 'from proto' })
    })

    test('a tool whose needsApproval is inherited (a class getter, a prototype) still asks for approval', async () => {
      class ApprovedTool {
        inputSchema = schema
        ran = vi.fn(async () => 'deleted everything')
        get needsApproval() {
          return true
        }
        execute() {
          return this.ran()
        }
      }
      const fromClass = new ApprovedTool()
      const fromPrototype = Object.assign(Object.create({ needsApproval: true, description: 'drops the table' }), { inputSchema: schema, execute: vi.fn(async () => 'dropped') })
      const tools = kit.offloadTools({ wipe: fromClass, drop: fromPrototype })
      expect(tools.drop.description).toBe('drops the table')
      const model = scripted(kit, [[toolCall('w1', 'wipe'), toolCall('d1', 'drop')], [{ type: 'text', text: 'ok' }]])
      const result = await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const kinds = result.steps[0].content.map((c: any) => c.type)
      expect(kinds.filter((k: string) => k === 'tool-approval-request')).toHaveLength(2)
      expect(kinds).not.toContain('tool-result')
      expect(fromClass.ran).not.toHaveBeenCalled()
      expect(fromPrototype.execute).not.toHaveBeenCalled()
    })

    test('model outputs that are not offloaded (images, neverOffload) are not kept alive by the adapter', async () => {
      const made: WeakRef<object>[] = []
      const screenshot = {
        inputSchema: schema,
        execute: async () => ({ png: Buffer.alloc(300_000, 7).toString('base64') }),
        toModelOutput: ({ output }: any) => {
          const modelOutput = { type: 'content', value: [{ type: 'text', text: 'the screen' }, { type: 'image-data', data: output.png, mediaType: 'image/png' }] }
          made.push(new WeakRef(modelOutput))
          return modelOutput
        },
      }
      const dump = {
        inputSchema: schema,
        execute: async () => ({ rows: logLines(2000) }),
        toModelOutput: ({ output }: any) => {
          const modelOutput = { type: 'json', value: output }
          made.push(new WeakRef(modelOutput))
          return modelOutput
        },
      }
      const tools = kit.offloadTools({ screenshot, dump }, { neverOffload: ['dump'] })
      for (let i = 0; i < 10; i++) {
        const model = scripted(kit, [[toolCall(`s${i}`, 'screenshot'), toolCall(`d${i}`, 'dump')], [{ type: 'text', text: 'ok' }]])
        await kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
        // The image went to the model as an image: nothing was offloaded.
        expect(toolOutputs(model.doGenerateCalls[1].prompt)[`s${i}`].value).toHaveLength(2)
      }
      await collect()
      expect(made.length).toBeGreaterThanOrEqual(20)
      expect(made.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
    })

    test('a tool set without a session does not take the session of another tool set’s call', async () => {
      const offloader = new kit.core.Offloader({ references: 'opaque', retrieval: 'extended' })
      const raw = logLines(3000)
      const logs = { inputSchema: schema, execute: async () => raw }
      const alice = kit.offloadTools({ logs }, { offloader, sessionId: 'alice' })
      const model = scripted(kit, [[toolCall('call_1', 'logs')], [{ type: 'text', text: 'ok' }]])
      await kit.ai.generateText({ model, tools: alice, prompt: 'p', stopWhen: kit.ai.stepCountIs(3) })
      const aliceRef = referenceIn(toolOutputs(model.doGenerateCalls[1].prompt).call_1.value)
      // Another conversation, with no session, re-sends a call of the same id: its own, or crafted.
      const anonymous = kit.offloadTools({ logs }, { offloader })
      const ui = (output: string) => [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-logs', toolCallId: 'call_1', state: 'output-available', input: {}, output }] }]
      const same = toolOutputs(await kit.ai.convertToModelMessages(ui(raw), { tools: anonymous })).call_1
      const ref = referenceIn(same.value)
      expect(ref).not.toBe(aliceRef)
      expect(await anonymous.retrieve_offloaded_content.execute({ reference: ref, line_range: { start: 1, end: 1 } }, callOptions('r1'))).toContain('0 x request 0 done')
      await kit.ai.convertToModelMessages(ui('INJECTED '.repeat(5000)), { tools: anonymous })
      const listed = await alice.retrieve_offloaded_content.execute({ list: true }, callOptions('r2'))
      expect(listed).not.toContain('INJECTED')
      expect(listed).toMatch(/Offloaded in this session: 1\b/)
    })

    test('a function sessionId: a call that did not run here (a client-side tool, a re-send after a restart) is not offloaded into the session every call without one reads', async () => {
      const offloader = new kit.core.Offloader({ references: 'opaque', retrieval: 'extended' })
      const sessionId = (o: any) => (o.context ?? o.experimental_context)?.chat
      // A client-side tool: no execute, its output comes back in the UI messages.
      const tools = kit.offloadTools({ pick_rows: { inputSchema: schema } }, { offloader, sessionId })
      const ui = [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-pick_rows', toolCallId: 'cl1', state: 'output-available', input: {}, output: logLines(3000, 'private') }] }]
      const preview = toolOutputs(await kit.ai.convertToModelMessages(ui, { tools })).cl1
      const ref = referenceIn(preview.value)
      // A call without a session (the function answers undefined, or a tool set without one) reads the offloader's own session.
      const sessionless = kit.offloadTools({}, { offloader }).retrieve_offloaded_content
      expect(await sessionless.execute({ reference: ref, line_range: { start: 1, end: 1 } }, callOptions('r1'))).toBe(`Error: reference not found: ${ref}`)
      expect(await tools.retrieve_offloaded_content.execute({ list: true }, callOptions('r2', {}))).not.toContain('private')
      expect(await sessionless.execute({ list: true }, callOptions('r3'))).not.toContain('private')
    })

    test('a call keeps its session while other calls run: a slow tool under load', async () => {
      const offloader = new kit.core.Offloader({ references: 'opaque' })
      const raw = logLines(3000, 'slow')
      let release = () => {}
      const gate = new Promise<void>((r) => (release = r))
      const sessionId = (o: any) => (o.context ?? o.experimental_context)?.chat
      const tools = kit.offloadTools(
        {
          slow: { inputSchema: schema, execute: async () => (await gate, raw) },
          quick: { inputSchema: schema, execute: async () => 'ok' },
        },
        { offloader, sessionId },
      )
      const model = scripted(kit, [[toolCall('slow-1', 'slow')], [{ type: 'text', text: 'ok' }]])
      const run = kit.ai.generateText({ model, tools, prompt: 'p', stopWhen: kit.ai.stepCountIs(3), ...kit.context(['slow'], { chat: 'alice' }) })
      await vi.waitFor(() => expect(model.doGenerateCalls).toHaveLength(1))
      // Meanwhile other conversations make many quick calls through the same tool set.
      for (let i = 0; i < 1100; i++) await tools.quick.execute({}, callOptions(`q${i}`, { chat: 'bob' }))
      release()
      await run
      const ref = referenceIn(toolOutputs(model.doGenerateCalls[1].prompt)['slow-1'].value)
      const read = (ctx?: unknown) => tools.retrieve_offloaded_content.execute({ reference: ref, line_range: { start: 1, end: 1 } }, callOptions('r', ctx))
      expect(await read({ chat: 'alice' })).toContain('0 slow request 0 done')
      expect(await read()).toBe(`Error: reference not found: ${ref}`)
    })
  })
}
