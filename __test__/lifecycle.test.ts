// The artifact lifecycle from JavaScript: TTL (storage default and per offload), sessions
// (the agent's), cleanup and stats, byte budgets with least-recently-used eviction,
// deduplication, the background sweep, restarts, two processes sweeping one directory
// and a SIGKILL in the middle of a sweep. Time comes from an injected clock: no sleeps.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test, vi } from 'vitest'
import { Agent, tool } from '@strands-agents/sdk'
import { InMemoryStorage as SdkUnifiedInMemoryStorage } from '@strands-agents/sdk/storage'
import { z } from 'zod'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { ScriptedModel, tempDir, textTurn, toolCallTurn } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

const T0 = 1_800_000_000_000
const bytes = (s: string) => new TextEncoder().encode(s)
const text = (b: Uint8Array) => new TextDecoder().decode(b)
const SWEEPER = join(__dirname, 'fixtures', 'lifecycle-sweeper.mjs')

function dir(prefix = 'co-life-') {
  const d = tempDir(prefix)
  cleanups.push(d.cleanup)
  return d.path
}

type Kind = 'memory' | 'file'
/** A storage of `kind` with a clock the test moves, and `options`. */
function make(kind: Kind, options: Record<string, unknown> = {}) {
  const clock = { now: T0 }
  const common = { clock: () => clock.now, ...options }
  const storage: any = kind === 'memory' ? new InMemoryStorage(common) : new FileStorage({ artifactDir: dir(), ...common })
  return { storage, clock }
}

describe.each(['memory', 'file'] as Kind[])('%s storage', (kind) => {
  test('a default TTL: expired references are refused at once, then swept and uncounted', async () => {
    const { storage, clock } = make(kind, { ttlSeconds: 60 })
    const ref = await storage.store('k', bytes('hello'), 'text/plain')
    clock.now += 59_999
    expect(text((await storage.retrieve(ref)).content)).toBe('hello')
    clock.now += 1
    await expect(storage.retrieve(ref)).rejects.toThrow(`Reference not found (expired): ${ref}`)
    expect(await storage.stats()).toEqual({ artifacts: 0, bytes: 0, storedBytes: 0, sessions: {} })
  })

  test('cleanupExpired removes exactly the expired ones; stats per session', async () => {
    const { storage, clock } = make(kind)
    const plugin = new ContextOffloader({ storage })
    const short = await plugin.offload('s'.repeat(20_000), { key: 'short', ttlSeconds: 10, sessionId: 'a' })
    await plugin.offload('l'.repeat(30_000), { key: 'long', ttlSeconds: 1_000, sessionId: 'a' })
    await plugin.offload('n'.repeat(40_000), { key: 'never', sessionId: 'b' })
    expect(await storage.stats()).toEqual({
      artifacts: 3,
      bytes: 90_000,
      storedBytes: 90_000,
      sessions: { a: { artifacts: 2, bytes: 50_000 }, b: { artifacts: 1, bytes: 40_000 } },
    })
    clock.now += 10_000
    expect(await storage.cleanupExpired()).toBe(1)
    expect(await storage.cleanupExpired()).toBe(0)
    await expect(storage.retrieve(short.references[0].reference)).rejects.toThrow('Reference not found (expired)')
    expect((await storage.stats()).sessions).toEqual({ a: { artifacts: 1, bytes: 30_000 }, b: { artifacts: 1, bytes: 40_000 } })
    expect(await storage.deleteSession('a')).toBe(1)
    expect(await storage.deleteSession('a')).toBe(0)
    expect((await storage.stats()).artifacts).toBe(1)
  })

  test('maxBytes evicts the least recently used (a retrieval is a use) and says so', async () => {
    const { storage } = make(kind, { maxBytes: 300 })
    const [a, b, c] = [await storage.store('a', new Uint8Array(100), 'x/a'), await storage.store('b', new Uint8Array(100), 'x/b'), await storage.store('c', new Uint8Array(100), 'x/c')]
    await storage.retrieve(a)
    const d = await storage.store('d', new Uint8Array(100), 'x/d')
    await expect(storage.retrieve(b)).rejects.toThrow(`Reference not found (evicted to stay under maxBytes): ${b}`)
    for (const r of [a, c, d]) expect((await storage.retrieve(r)).content.length).toBe(100)
    expect((await storage.stats()).storedBytes).toBe(300)
  })

  test('maxBytes: what expired leaves the budget first (as expired), before any live artifact', async () => {
    const { storage, clock } = make(kind, { maxBytes: 100_000 })
    const plugin = new ContextOffloader({ storage })
    const ref = async (key: string, ttlSeconds?: number) =>
      (await plugin.offload(key[0]!.repeat(30_000), { key, ...(ttlSeconds ? { ttlSeconds } : {}) })).references[0].reference
    const older = await ref('older')
    const old = await ref('old')
    const brief = await ref('brief', 1)
    clock.now += 1_000
    const next = await ref('next')
    await expect(storage.retrieve(brief)).rejects.toThrow(`Reference not found (expired): ${brief}`)
    for (const r of [older, old, next]) expect((await storage.retrieve(r)).content.length).toBe(30_000)
    expect((await storage.stats()).storedBytes).toBe(90_000)
  })

  test('storedBytes does not count what expired', async () => {
    const { storage, clock } = make(kind, { dedup: true })
    const plugin = new ContextOffloader({ storage })
    await plugin.offload('s'.repeat(20_000), { key: 'brief', ttlSeconds: 10 })
    await plugin.offload('s'.repeat(20_000), { key: 'shared', ttlSeconds: 20 })
    await plugin.offload('k'.repeat(30_000), { key: 'kept' })
    expect(await storage.stats()).toMatchObject({ artifacts: 3, bytes: 70_000, storedBytes: 50_000 })
    clock.now += 10_000
    expect(await storage.stats()).toMatchObject({ artifacts: 2, bytes: 50_000, storedBytes: 50_000 })
    clock.now += 10_000
    expect(await storage.stats()).toMatchObject({ artifacts: 1, bytes: 30_000, storedBytes: 30_000 })
  })

  test('content larger than the whole budget: a clear error; the plugin keeps the result or truncates', async () => {
    const { storage } = make(kind, { maxBytes: 10_000 })
    await expect(storage.store('big', new Uint8Array(10_001), 'text/plain')).rejects.toThrow(
      "cannot store 10001 bytes: larger than the storage's maxBytes (10000)",
    )
    const keep = new ContextOffloader({ storage })
    await expect(keep.offload('x'.repeat(20_000), { key: 'k' })).rejects.toThrow('offload failed')
    const truncate = new ContextOffloader({ storage, onStorageError: 'truncate' })
    const out = await truncate.offload('x'.repeat(20_000), { key: 'k' })
    expect(out.truncated).toBe(true)
    expect(out.text).toContain("larger than the storage's maxBytes")
  })

  test('dedup: the same 1 MB result offloaded 20 times is held once; references stay distinct and valid', async () => {
    const { storage, clock } = make(kind, { dedup: true })
    const plugin = new ContextOffloader({ storage })
    const big = 'y'.repeat(1_000_000)
    const refs: string[] = []
    for (let i = 0; i < 20; i++) {
      const out = await plugin.offload(big, { key: `r${i}`, ttlSeconds: i < 10 ? 5 : 1_000 })
      refs.push(out.references[0].reference)
    }
    expect(new Set(refs).size).toBe(20)
    expect(await storage.stats()).toMatchObject({ artifacts: 20, bytes: 20_000_000, storedBytes: 1_000_000 })
    clock.now += 5_000
    expect(await storage.cleanupExpired()).toBe(10)
    expect((await storage.stats()).storedBytes).toBe(1_000_000)
    for (const r of refs.slice(10)) expect((await storage.retrieve(r)).content.length).toBe(1_000_000)
    clock.now += 1_000_000
    expect(await storage.cleanupExpired()).toBe(10)
    expect((await storage.stats()).storedBytes).toBe(0)
  })

  test('the background sweep runs on an unref\'d timer and stops with close()', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      const { storage, clock } = make(kind, { ttlSeconds: 1, cleanupIntervalSeconds: 30 })
      await storage.store('k', bytes('v'), 'text/plain')
      clock.now += 1_000
      vi.advanceTimersByTime(30_000)
      await vi.waitFor(async () => expect((await storage.stats()).storedBytes).toBe(0), { interval: 5, timeout: 5_000 })
      storage.close()
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  test('bad lifecycle options are refused with clear errors', async () => {
    const build = (o: Record<string, unknown>) => (kind === 'memory' ? new InMemoryStorage(o) : new FileStorage({ artifactDir: dir(), ...o }))
    expect(() => build({ ttlSeconds: -1 })).toThrow('ttlSeconds must be a positive number of seconds, got number -1')
    expect(() => build({ ttlSeconds: Number.NaN })).toThrow(RangeError)
    expect(() => build({ ttlSeconds: '60' })).toThrow(TypeError)
    expect(() => build({ maxBytes: 0 })).toThrow('maxBytes must be a positive integer number of bytes, got number 0')
    expect(() => build({ maxBytes: 1.5 })).toThrow(RangeError)
    expect(() => build({ cleanupIntervalSeconds: 2.5 })).toThrow('cleanupIntervalSeconds must be a positive integer')
    expect(() => build({ dedup: 1 })).toThrow(TypeError)
    expect(() => build({ clock: 123 })).toThrow(TypeError)
    expect(() => new ContextOffloader({ ttlSeconds: 0 })).toThrow(RangeError)
    const { storage } = make(kind)
    await expect(storage.deleteSession('')).rejects.toThrow(TypeError)
  })
})

describe('with a real agent', () => {
  test('what the plugin stores carries agent.sessionId; an expired reference says so to the model', { timeout: 60_000 }, async () => {
    const clock = { now: T0 }
    const storage = new InMemoryStorage({ clock: () => clock.now })
    const plugin = new ContextOffloader({ storage, ttlSeconds: 60 })
    let ref = ''
    let answer = ''
    const model = new ScriptedModel([
      () => toolCallTurn('fetch', 'tu-1', {}),
      (messages) => {
        const last = messages[messages.length - 1]
        const texts = last.content.find((b: any) => b.type === 'toolResultBlock').content.map((c: any) => c.text)
        ref = /\n {2}(\S+) \(text/.exec(texts[0])![1]!
        clock.now += 60_000
        return toolCallTurn('retrieve_offloaded_content', 'tu-2', { reference: ref, pattern: 'x' })
      },
      (messages) => {
        const last = messages[messages.length - 1]
        answer = last.content.find((b: any) => b.type === 'toolResultBlock').content[0].text
        return textTurn('done')
      },
    ])
    const fetch = tool({ name: 'fetch', description: 'f', inputSchema: z.object({}), callback: () => 'x'.repeat(50_000) })
    const agent = new Agent({ model, tools: [fetch], plugins: [plugin], printer: false })
    await agent.invoke('go')
    expect(answer).toBe(`Error: reference not found (expired): ${ref}`)
    clock.now = T0
    // Stored under the agent's session (the SDK's `agent.sessionId`).
    const fresh = new InMemoryStorage({ clock: () => clock.now })
    const agent3 = new Agent({
      model: new ScriptedModel([() => toolCallTurn('fetch', 'tu-9', {}), () => textTurn('ok')]),
      tools: [fetch],
      plugins: [new ContextOffloader({ storage: fresh })],
      printer: false,
    })
    await agent3.invoke('go')
    expect((await fresh.stats()).sessions).toEqual({ [agent3.sessionId]: { artifacts: 1, bytes: 50_000 } })
    expect(await fresh.deleteSession(agent3.sessionId)).toBe(1)
  })

  test.each([
    ['our InMemoryStorage', () => new InMemoryStorage()],
    ['no storage (the agent\'s unified storage, the default)', () => undefined],
    ["the SDK's unified in-memory storage", () => new SdkUnifiedInMemoryStorage()],
  ])('evictAfterCycles: an artifact the agent keeps reading is not evicted: %s', { timeout: 60_000 }, async (_, makeStorage) => {
    const storage: any = makeStorage()
    const plugin = new ContextOffloader({ ...(storage && { storage }), evictAfterCycles: 2 })
    let ref = ''
    const answers: string[] = []
    const read = (messages: any[]) => {
      const last = messages[messages.length - 1]
      const t = last.content.find((b: any) => b.type === 'toolResultBlock').content[0].text
      if (!ref) ref = /\n {2}(\S+) \(text/.exec(t)![1]!
      else answers.push(t)
      return toolCallTurn('retrieve_offloaded_content', `r${answers.length}`, { reference: ref, line_range: { start: 1, end: 1 } })
    }
    const turns = [() => toolCallTurn('fetch', 'tu-1', {}), ...Array.from({ length: 8 }, () => read), () => textTurn('done')]
    const fetch = tool({ name: 'fetch', description: 'f', inputSchema: z.object({}), callback: () => 'line\n'.repeat(20_000) })
    const agent = new Agent({ model: new ScriptedModel(turns), tools: [fetch], plugins: [plugin], printer: false })
    await agent.invoke('go')
    expect(answers.length).toBe(7)
    for (const a of answers) expect(a).not.toContain('reference not found')
    if (storage instanceof InMemoryStorage) expect(storage.size).toBe(1)
  })

  test('evictAfterCycles on the default storage: what is not read is still evicted', { timeout: 60_000 }, async () => {
    const plugin = new ContextOffloader({ evictAfterCycles: 2 })
    const refs: string[] = []
    const answers: string[] = []
    const reply = (messages: any[]) => {
      const last = messages[messages.length - 1]
      const t = last.content.find((b: any) => b.type === 'toolResultBlock').content[0].text
      const m = /\n {2}(\S+) \(text/.exec(t)
      if (m) refs.push(m[1]!)
      else answers.push(t)
    }
    // Two offloads; then only the second is read on each cycle: the first goes after 2 idle cycles.
    const turns = [
      () => toolCallTurn('fetch', 'tu-1', {}),
      (m: any[]) => (reply(m), toolCallTurn('fetch', 'tu-2', {})),
      ...Array.from({ length: 5 }, () => (m: any[]) => (reply(m), toolCallTurn('retrieve_offloaded_content', `r${answers.length}`, { reference: refs[1], line_range: { start: 1, end: 1 } }))),
      (m: any[]) => (reply(m), toolCallTurn('retrieve_offloaded_content', 'last', { reference: refs[0], line_range: { start: 1, end: 1 } })),
      (m: any[]) => (reply(m), textTurn('done')),
    ]
    const fetch = tool({ name: 'fetch', description: 'f', inputSchema: z.object({}), callback: () => 'line\n'.repeat(20_000) })
    const agent = new Agent({ model: new ScriptedModel(turns), tools: [fetch], plugins: [plugin], printer: false })
    await agent.invoke('go')
    expect(refs.length).toBe(2)
    expect(answers.slice(0, 5).every((a) => !a.includes('not found'))).toBe(true)
    expect(answers[5]).toContain('not found')
  })
})

describe('file storage integrity', () => {
  const blobOf = (artifactDir: string, content: Uint8Array) =>
    join(artifactDir, '.blobs', createHash('sha256').update(content).digest('hex'))

  test('dedup: a planted .blobs entry of the same length never answers a store', async () => {
    const artifactDir = dir()
    const storage = new FileStorage({ artifactDir, dedup: true })
    const content = bytes('the real content')
    const first = await storage.store('first', content, 'text/plain')
    unlinkSync(blobOf(artifactDir, content))
    writeFileSync(blobOf(artifactDir, content), 'planted content!')
    const second = await storage.store('second', content, 'text/plain')
    expect(text((await storage.retrieve(second)).content)).toBe('the real content')
    expect(text((await storage.retrieve(first)).content)).toBe('the real content')
    expect(readFileSync(blobOf(artifactDir, content), 'utf8')).toBe('the real content')
  })

  test('dedup: an artifact edited in place is never shared with a later store', async () => {
    const artifactDir = dir()
    const storage = new FileStorage({ artifactDir, dedup: true })
    const content = bytes('original content')
    const first = await storage.store('first', content, 'text/plain')
    writeFileSync(first, 'edited  content!')
    for (const key of ['second', 'third']) {
      const ref = await storage.store(key, content, 'text/plain')
      expect(text((await storage.retrieve(ref)).content)).toBe('original content')
    }
  })

  test('a content type with a C1 control character: stored, retrieved, seen by another instance, expired', async () => {
    const artifactDir = dir()
    const contentType = 'application/pdf\u0085'
    const storage = new FileStorage({ artifactDir, ttlSeconds: 60, clock: () => T0 })
    const ref = await storage.store('doc', bytes('%PDF'), contentType)
    expect(ref.endsWith('.pdf_')).toBe(true)
    expect(await storage.retrieve(ref)).toEqual({ content: bytes('%PDF'), contentType })
    const other = new FileStorage({ artifactDir, clock: () => T0 + 60_000 })
    expect((await new FileStorage({ artifactDir, clock: () => T0 }).stats()).artifacts).toBe(1)
    expect(await other.cleanupExpired()).toBe(1)
    expect(readdirSync(artifactDir).filter((f) => !f.startsWith('.'))).toEqual([])
  })

  test('a journal of removed artifacts is compacted when the directory is next opened', async () => {
    const artifactDir = dir()
    let journal = ''
    for (let i = 0; i < 20_000; i++) {
      const name = `${T0 + i}_${i}_tooluse_${i}_0.json`
      journal += `{"f":"${name}","t":"application/json","n":${1_000 + i},"c":${T0 + i}}\n{"r":"${name}","y":"v"}\n`
    }
    writeFileSync(join(artifactDir, '.metadata.journal'), journal)
    const before = statSync(join(artifactDir, '.metadata.journal')).size
    const storage = new FileStorage({ artifactDir, clock: () => T0 })
    const ref = await storage.store('live', bytes('live'), 'text/x-live')
    const after = statSync(join(artifactDir, '.metadata.journal')).size
    expect(before).toBeGreaterThan(2_000_000)
    expect(after).toBeLessThan(100_000)
    const last = `${T0 + 19_999}_19999_tooluse_19999_0.json`
    await expect(storage.retrieve(last)).rejects.toThrow(`Reference not found (evicted to stay under maxBytes): ${last}`)
    expect((await new FileStorage({ artifactDir, clock: () => T0 }).retrieve(ref)).contentType).toBe('text/x-live')
  })
})

describe('file storage across processes', () => {
  /** A directory with `n` artifacts stored at T0, even ones expiring at T0 + 10 s, odd ones never. */
  async function populated(n: number) {
    const artifactDir = dir('co-life-proc-')
    const shortLived = new FileStorage({ artifactDir, clock: () => T0, ttlSeconds: 10 })
    const kept = new FileStorage({ artifactDir, clock: () => T0 })
    const refs: Array<{ ref: string; body: string; expires: boolean }> = []
    for (let i = 0; i < n; i++) {
      const body = `artifact ${i} `.repeat(1 + (i % 7))
      const expires = i % 2 === 0
      const ref = await (expires ? shortLived : kept).store(`k${i}`, bytes(body), 'text/plain')
      refs.push({ ref, body, expires })
    }
    return { artifactDir, refs }
  }

  function runSweeper(artifactDir: string, now: number, onStart?: (child: any) => void, mode: string[] = ['sweep']) {
    return new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [SWEEPER, artifactDir, String(now), ...mode])
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        if (out.startsWith('start\n') && onStart) {
          const start = onStart
          onStart = undefined
          start(child)
        }
      })
      child.on('exit', (code, signal) => resolve({ code, signal, out }))
    })
  }

  async function checkNothingUnexpiredLost(artifactDir: string, refs: Array<{ ref: string; body: string; expires: boolean }>) {
    const reopened = new FileStorage({ artifactDir, clock: () => T0 + 20_000 })
    for (const { ref, body, expires } of refs) {
      if (expires) await expect(reopened.retrieve(ref)).rejects.toThrow('Reference not found')
      else expect(text((await reopened.retrieve(ref)).content)).toBe(body)
    }
    return reopened
  }

  test('a restart sees the same TTLs, sessions and sizes', async () => {
    const artifactDir = dir()
    const first = new FileStorage({ artifactDir, clock: () => T0, ttlSeconds: 10 })
    const plugin = new ContextOffloader({ storage: first })
    await plugin.offload('a'.repeat(20_000), { key: 'a', sessionId: 's1' })
    await plugin.offload('b'.repeat(30_000), { key: 'b', sessionId: 's2', ttlSeconds: 100 })
    const before = await first.stats()
    const again = new FileStorage({ artifactDir, clock: () => T0 })
    expect(await again.stats()).toEqual(before)
    const later = new FileStorage({ artifactDir, clock: () => T0 + 10_000 })
    expect(await later.stats()).toMatchObject({ artifacts: 1, sessions: { s2: { artifacts: 1, bytes: 30_000 } } })
  })

  test('two processes sweeping one directory remove each expired artifact once and nothing else', { timeout: 120_000 }, async () => {
    const { artifactDir, refs } = await populated(2_000)
    const [a, b] = await Promise.all([runSweeper(artifactDir, T0 + 20_000), runSweeper(artifactDir, T0 + 20_000)])
    expect([a.code, b.code]).toEqual([0, 0])
    const removed = Number(a.out.split('\n')[1]) + Number(b.out.split('\n')[1])
    expect(removed).toBe(1_000)
    const reopened = await checkNothingUnexpiredLost(artifactDir, refs)
    expect((await reopened.stats()).artifacts).toBe(1_000)
  })

  test('a SIGKILL during a sweep loses nothing unexpired and resurrects nothing expired', { timeout: 180_000 }, async () => {
    const leftByKill: number[] = []
    let killedSelf: string | null = null
    // Killed after a delay from this process, or (-1) by the sweeper itself as soon as its
    // sweep has removed its first file: that one always lands in the middle of the sweep.
    for (const delayMs of [0, 15, 40, -1]) {
      const { artifactDir, refs } = await populated(2_000)
      const killed =
        delayMs < 0
          ? await runSweeper(artifactDir, T0 + 20_000, undefined, ['sweep-die', '2000'])
          : await runSweeper(artifactDir, T0 + 20_000, (child: any) => setTimeout(() => child.kill('SIGKILL'), delayMs))
      expect(killed.signal === 'SIGKILL' || killed.code === 0).toBe(true)
      if (delayMs < 0) killedSelf = killed.signal
      leftByKill.push(readdirSync(artifactDir).filter((f) => !f.startsWith('.')).length)
      const reopened = await checkNothingUnexpiredLost(artifactDir, refs)
      // What the killed sweep left is swept now; the stats then count exactly the unexpired.
      await reopened.cleanupExpired()
      expect(await reopened.stats()).toMatchObject({ artifacts: 1_000 })
      const files = readdirSync(artifactDir).filter((f) => !f.startsWith('.'))
      expect(files.length).toBe(1_000)
      for (const f of files) expect(statSync(join(artifactDir, f)).size).toBeGreaterThan(0)
    }
    // The self-inflicted kill stopped a sweep that had begun and not finished.
    expect(killedSelf).toBe('SIGKILL')
    expect(leftByKill[3]).toBeGreaterThan(1_000)
    expect(leftByKill[3]).toBeLessThan(2_000)
  })
})
