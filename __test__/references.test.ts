// Opaque references with a real SDK Agent and a scripted offline model: what the model
// sees never names a host path, a bucket or a storage name; the retrieval tool answers
// only ids given to the calling agent's session; forged, cross-session, raw-storage and
// path-shaped references are "not found", as a deleted one is.
import { afterAll, describe, expect, test } from 'vitest'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, tool } from '@strands-agents/sdk'
import { z } from 'zod'
import { ContextOffloader, FileSnapshotStorage, FileStorage, InMemoryStorage } from '../index.js'
import { ScriptedModel, lastToolResultText, sessionManagerFor, prng, tempDir, textTurn, toolCallTurn, toolAnswer } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

const NEEDLE = 'code=E4711'
const LOG = Array.from({ length: 4000 }, (_, i) =>
  i === 2222 ? `ERROR ${NEEDLE} disk full` : `INFO worker=${i % 8} handled request #${i}`,
).join('\n')
const OPAQUE = /(?<![A-Za-z0-9_-])ref_[A-Za-z0-9_-]{16}(?![A-Za-z0-9_-])/


/** A session manager over snapshot files in a temporary directory. */
function sessionManager(sessionId: string) {
  const d = tempDir('co-opaque-sessions-')
  cleanups.push(d.cleanup)
  return sessionManagerFor(sessionId, new FileSnapshotStorage(d.path))
}

/**
 * Runs an agent whose tool returns LOG; the model then sends `calls(id)` to the
 * retrieval tool one by one (id: the reference the preview showed). Returns the answers,
 * the id, and everything the model saw (as JSON).
 */
async function run(plugin: any, calls: (id: string) => object[], sessionId?: string) {
  let id = ''
  const answers: string[] = []
  let inputs: object[] = []
  const turns: any[] = [
    () => toolCallTurn('fetch_logs', 'tu-1', {}),
    (messages: any[]) => {
      id = OPAQUE.exec(lastToolResultText(messages))?.[0] ?? /\n {2}(\S+) \(text/.exec(lastToolResultText(messages))![1]!
      inputs = calls(id)
      return inputs.length ? toolCallTurn('retrieve_offloaded_content', 'r-0', inputs[0]) : textTurn('done')
    },
  ]
  for (let i = 1; i <= 16; i++) {
    turns.push((messages: any[]) => {
      answers.push(lastToolResultText(messages))
      return i < inputs.length ? toolCallTurn('retrieve_offloaded_content', `r-${i}`, inputs[i]) : textTurn('done')
    })
  }
  const model = new ScriptedModel(turns)
  const fetchLogs = tool({ name: 'fetch_logs', description: 'logs', inputSchema: z.object({}), callback: () => LOG })
  const agent = new Agent({
    model,
    tools: [fetchLogs],
    plugins: [plugin],
    printer: false,
    ...(sessionId ? { sessionManager: sessionManager(sessionId) } : {}),
  } as any)
  await agent.invoke('why did it fail?')
  return { id, answers, seen: JSON.stringify(model.seen), agent }
}

/** Every tool result text of every model call (the wire form the model received). */
function toolResultTexts(seen: any[][]): string[] {
  return seen.flat().flatMap((m: any) =>
    m.content.flatMap((b: any) => (b.toolResult ? b.toolResult.content.map((c: any) => c.text ?? JSON.stringify(c)) : [])),
  )
}

/** A random id of the opaque shape. */
function forgedId(seed: number): string {
  const random = prng(seed)
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  return `ref_${Array.from({ length: 16 }, () => random.pick([...alphabet])).join('')}`
}

describe.each(['file', 'memory'] as const)("references: 'opaque' (%s storage)", (kind) => {
  function storage() {
    if (kind === 'memory') return { storage: new InMemoryStorage(), dir: undefined }
    const d = tempDir('co-opaque-')
    cleanups.push(d.cleanup)
    return { storage: new FileStorage(d.path), dir: d.path }
  }

  test('the model sees only opaque ids; they retrieve; forged, raw and path-shaped ones are not found', { timeout: 60_000 }, async () => {
    const { storage: s, dir } = storage()
    const plugin = new ContextOffloader({ storage: s, references: 'opaque' })
    // Raw storage references are read when the model asks (the file exists by then).
    const rawReference = () => (dir ? join(dir, readdirSync(dir).find((f) => f.includes('tu-1_0'))!) : 'mem_1_tu-1_0')
    let hostile: string[] = []
    const { id, answers, seen } = await run(plugin, (ref) => {
      hostile = [
        forgedId(1),
        forgedId(2),
        rawReference(),
        'mem_1_tu-1_0',
        '../../../../etc/passwd',
        '/etc/passwd',
        'C:\\Windows\\win.ini',
        's3://bucket/offloader/tu-1_0',
      ]
      return [{ reference: ref, pattern: NEEDLE, context_lines: 0 }, ...hostile.map((reference) => ({ reference }))]
    })
    expect(id).toMatch(OPAQUE)
    expect(answers[0]).toContain(`ERROR ${NEEDLE} disk full`)
    hostile.forEach((reference, i) => expect(answers[i + 1]).toBe(`Error: reference not found: ${reference}`))
    // Nothing the model received names the directory or a storage reference (apart from
    // the answers that echo the hostile references it sent itself).
    const echoes = new Set(hostile.map((reference) => `Error: reference not found: ${reference}`))
    const received = toolResultTexts(JSON.parse(seen)).filter((t) => !echoes.has(t))
    expect(received.length).toBeGreaterThan(1)
    for (const text of received) {
      if (dir) expect(text.includes(dir)).toBe(false)
      expect(/mem_\d+_tu-1_0|tu-1_0\.txt|s3:\/\//.test(text)).toBe(false)
    }
    // The application keeps full access through the storage API.
    // (and the raw reference the model was refused is a real one)
    const back = await s.retrieve(rawReference())
    expect(new TextDecoder().decode(back.content)).toBe(LOG)
  })

  test('a deleted valid id and a forged id get the same answer', { timeout: 60_000 }, async () => {
    const { storage: s } = storage()
    const plugin = new ContextOffloader({ storage: s, references: 'opaque' })
    const forged = forgedId(7)
    const { id, answers, agent } = await run(plugin, (ref) => [{ reference: ref, line_range: { start: 1, end: 1 } }], 'session-d')
    expect(answers[0]).toContain('[Lines 1-1 of 4000]')
    expect(await (s as any).deleteSession('session-d')).toBe(1)
    const tool = plugin.getTools()[0] as any
    const ask = (reference: string) => toolAnswer(tool, { reference, pattern: 'ERROR' }, agent)
    const deleted = await ask(id)
    const unknown = await ask(forged)
    expect(deleted.replace(id, '<id>')).toBe(unknown.replace(forged, '<id>'))
    expect(deleted).toBe(`Error: reference not found: ${id}`)
  })
})

// Sessions over one directory (one InMemoryStorage serves one agent, the SDK's rule).
test('an id of another session is not found; the same session after a restart finds it', { timeout: 60_000 }, async () => {
  const d = tempDir('co-opaque-')
  cleanups.push(d.cleanup)
  const s = new FileStorage(d.path)
  const first = await run(new ContextOffloader({ storage: s, references: 'opaque' }), () => [], 'session-a')
  expect(first.id).toMatch(OPAQUE)
  // Another session (a different plugin instance over the same storage).
  const other = await run(new ContextOffloader({ storage: s, references: 'opaque' }), () => [{ reference: first.id, pattern: NEEDLE }], 'session-b')
  expect(other.answers[0]).toBe(`Error: reference not found: ${first.id}`)
  // The same session in a fresh plugin (a restart): the id still resolves.
  const again = await run(new ContextOffloader({ storage: s, references: 'opaque' }), () => [{ reference: first.id, pattern: NEEDLE, context_lines: 0 }], 'session-a')
  expect(again.answers[0]).toContain(`ERROR ${NEEDLE} disk full`)
})

test('ids issued by another plugin instance on the same storage resolve in the same session; deleteSession ends them for every instance', { timeout: 60_000 }, async () => {
  const d = tempDir('co-opaque-')
  cleanups.push(d.cleanup)
  const storage = new FileStorage(d.path)
  const reader = new ContextOffloader({ storage, references: 'opaque', retrieval: 'extended' })
  const writer = new ContextOffloader({ storage: new FileStorage(d.path), references: 'opaque' })
  const agent = { sessionId: 'shared', sessionManager: { sessionId: 'shared' } }
  const tool = reader.getTools()[0] as any
  const ask = (input: object) => toolAnswer(tool, input, agent)
  expect(await ask({ list: true })).toMatch(/^Nothing was offloaded/)
  const { references } = await writer.offload(LOG, { key: 'later', sessionId: 'shared', toolName: 'fetch_logs' })
  const id = references[0]!.reference
  expect(await ask({ reference: id, pattern: NEEDLE, context_lines: 0 })).toContain(`ERROR ${NEEDLE} disk full`)
  expect(await ask({ list: true })).toContain(`${id} | tool: fetch_logs | text/plain`)
  expect(await storage.deleteSession('shared')).toBe(1)
  expect(await ask({ reference: id, pattern: NEEDLE })).toBe(`Error: reference not found: ${id}`)
  expect(await ask({ list: true })).toMatch(/^Nothing was offloaded/)
})

test('seeded fuzz: near-miss ids, paths, Windows shapes, unicode and huge strings are all "not found"', { timeout: 60_000 }, async () => {
  const d = tempDir('co-opaque-')
  cleanups.push(d.cleanup)
  const storage = new FileStorage(d.path)
  const plugin = new ContextOffloader({ storage, references: 'opaque' })
  const agent = { sessionId: 'fuzz', sessionManager: { sessionId: 'fuzz' } }
  const { references } = await plugin.offload(LOG, { key: 'tu-1', sessionId: 'fuzz' })
  const id = references[0]!.reference
  const raw = references[0]!.storageReference!
  const tool = plugin.getTools()[0] as any
  const ask = (reference: string) => toolAnswer(tool, { reference, line_range: { start: 1, end: 1 } }, agent)
  expect(await ask(id)).toMatch(/^\[Lines 1-1 of 4000\]/)
  const random = prng(20261124)
  const alphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_']
  const shapes = [
    () => id.slice(0, 4 + random.int(0, 15)) + random.pick(alphabet) + id.slice(5 + random.int(0, 15)), // one character off
    () => id.toUpperCase(),
    () => `${id} `,
    () => ` ${id}`,
    () => `${id}\u0000`,
    () => id + random.pick(alphabet),
    () => id.slice(0, -1),
    () => raw,
    () => raw.replace(/\//g, '\\'),
    () => `file://${raw}`,
    () => join(d.path, '..', '..', 'etc', 'passwd'),
    () => `C:${raw.split('/').pop()}`,
    () => `\\\\?\\C:\\${raw.split('/').pop()}`,
    () => `offload-manifest/${Buffer.from('fuzz').toString('base64url')}/${id}.json`,
    () => `ref_${'🙂'.repeat(8)}`,
    () => 'ref_' + 'A'.repeat(random.int(0, 40)),
    () => 'x'.repeat(random.int(1000, 100_000)),
    () => Array.from({ length: random.int(1, 30) }, () => String.fromCharCode(random.int(0, 0xffff))).join(''),
  ]
  for (let i = 0; i < 300; i++) {
    const reference = random.pick(shapes)()
    if (reference === id) continue
    expect(await ask(reference)).toBe(`Error: reference not found: ${reference}`)
  }
})

test("references: 'opaque' ids carry at least 64 random bits and never repeat", async () => {
  const plugin = new ContextOffloader({ storage: new InMemoryStorage(), references: 'opaque' })
  const ids = new Set<string>()
  for (let i = 0; i < 200; i++) {
    const { references } = await plugin.offload('x'.repeat(100), { key: `k${i}`, sessionId: 's' })
    expect(references[0]!.reference).toMatch(/^ref_[A-Za-z0-9_-]{16}$/)
    expect(references[0]!.storageReference).toMatch(/^mem_\d+_k\d+_0$/)
    ids.add(references[0]!.reference)
  }
  expect(ids.size).toBe(200)
})

test('references and retrieval options reject unknown values with a clear error', () => {
  expect(() => new ContextOffloader({ references: 'secret' as any })).toThrow("Unknown references 'secret': expected one of 'paths', 'opaque'")
  expect(() => new ContextOffloader({ retrieval: 'full' as any })).toThrow("Unknown retrieval 'full': expected one of 'sdk', 'extended'")
  expect(() => new ContextOffloader({ offloadErrors: 'yes' as any })).toThrow('offloadErrors must be a boolean')
})
