// An id handed out by a manual `offload()` with opaque references is readable by the
// agent's retrieval tool on its next invoke, and listed, however the id was made: before
// the agent exists, before its first invoke, or with `sessionId: agent.sessionId` and no
// SessionManager.
import { describe, expect, test } from 'vitest'
import { Agent } from '@strands-agents/sdk'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { ScriptedModel, tempDir, textTurn, toolCallTurn } from './helpers/harness.js'

const CONTENT = 'the manual content\nsecond line\n'

/** An agent that reads `id` (line 1) and lists, then answers; returns what the tool answered. */
async function readBack(agent: Agent, model: ScriptedModel, id: () => string) {
  const answers: string[] = []
  const answer = (messages: any[]) => {
    const last = messages[messages.length - 1]
    answers.push(last.content.find((b: any) => b.type === 'toolResultBlock').content[0].text)
  }
  model.turns.push(
    () => toolCallTurn('retrieve_offloaded_content', 'r1', { reference: id(), line_range: { start: 1, end: 1 } }),
    (m: any[]) => (answer(m), toolCallTurn('retrieve_offloaded_content', 'r2', { list: true })),
    (m: any[]) => (answer(m), textTurn('done')),
  )
  await agent.invoke('go')
  return answers
}

const plugin = () => new ContextOffloader({ storage: new InMemoryStorage(), references: 'opaque', retrieval: 'extended' })

describe('ids of a manual offload()', () => {
  test('made before the agent exists', { timeout: 30_000 }, async () => {
    const p = plugin()
    const { references } = await p.offload(CONTENT, { key: 'early' })
    const id = references[0].reference
    const model = new ScriptedModel()
    const agent = new Agent({ model, plugins: [p], printer: false })
    const [read, listing] = await readBack(agent, model, () => id)
    expect(read).toContain('the manual content')
    expect(listing).toContain(id)
  })

  test('made after the agent exists, before its first invoke (no agent given)', { timeout: 30_000 }, async () => {
    const p = plugin()
    const model = new ScriptedModel()
    const agent = new Agent({ model, plugins: [p], printer: false })
    const { references } = await p.offload(CONTENT, { key: 'before-invoke' })
    const id = references[0].reference
    const [read, listing] = await readBack(agent, model, () => id)
    expect(read).toContain('the manual content')
    expect(listing).toContain(id)
  })

  test('made before the first invoke with the agent given', { timeout: 30_000 }, async () => {
    const p = plugin()
    const model = new ScriptedModel()
    const agent = new Agent({ model, plugins: [p], printer: false })
    const { references } = await p.offload(CONTENT, { key: 'with-agent', agent: agent as any })
    const id = references[0].reference
    const [read, listing] = await readBack(agent, model, () => id)
    expect(read).toContain('the manual content')
    expect(listing).toContain(id)
  })

  test('made with sessionId: agent.sessionId and no SessionManager', { timeout: 30_000 }, async () => {
    const p = plugin()
    const model = new ScriptedModel()
    const agent = new Agent({ model, plugins: [p], printer: false })
    const { references } = await p.offload(CONTENT, { key: 'by-session', sessionId: agent.sessionId })
    const id = references[0].reference
    const [read, listing] = await readBack(agent, model, () => id)
    expect(read).toContain('the manual content')
    expect(listing).toContain(id)
  })

  test("another agent of the same plugin does not read the first agent's early ids", { timeout: 30_000 }, async () => {
    const d = tempDir('co-ids-')
    const p = new ContextOffloader({ storage: new FileStorage(d.path), references: 'opaque', retrieval: 'extended' })
    const { references } = await p.offload(CONTENT, { key: 'early' })
    const id = references[0].reference
    const firstModel = new ScriptedModel()
    const first = new Agent({ model: firstModel, plugins: [p], printer: false })
    expect((await readBack(first, firstModel, () => id))[0]).toContain('the manual content')
    const secondModel = new ScriptedModel()
    const second = new Agent({ model: secondModel, plugins: [p], printer: false })
    const [read, listing] = await readBack(second, secondModel, () => id)
    expect(read).toMatch(/^Error: reference not found/)
    expect(listing).not.toContain(id)
    d.cleanup()
  })

  test('a bad agent is refused with an error naming agent', async () => {
    const p = plugin()
    for (const agent of [null, 'agent', 42]) {
      await expect(p.offload(CONTENT, { key: 'k', agent: agent as any })).rejects.toThrow(/agent/)
    }
  })
})
