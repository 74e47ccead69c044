// An offload is whole or it fails visibly: the blocks of one result stand or fall
// together under a byte budget (refused when they cannot fit together, failed when a
// concurrent store evicts one before the others are stored), an opaque id whose
// manifest entry cannot be written is never handed out, long session ids still get ids
// that resolve, session ids that differ only in an unpaired surrogate are refused rather
// than merged, an unknown id after a restart costs what an issued one costs (no reading
// of the whole manifest), and deleting a session leaves nothing that names it.
import { afterAll, describe, expect, test } from 'vitest'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent } from '@strands-agents/sdk'
import { ContextOffloader, FileSnapshotStorage, FileStorage, InMemoryStorage } from '../index.js'
import { storeBlocks } from '../lib/store-blocks.js'
import { NATIVE, tagged } from '../lib/storage/native-backed.js'
import { MANIFEST_NAMESPACE, sessionSegment } from '../lib/manifest-keys.js'
import { TextBlock } from '@strands-agents/sdk'
import { Driven, ScriptedModel, sessionManagerFor, tempDir, toolAnswer } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

function dir(prefix: string): string {
  const d = tempDir(prefix)
  cleanups.push(d.cleanup)
  return d.path
}

const storages = {
  memory: (options: object) => new InMemoryStorage(options as any),
  file: (options: object) => new FileStorage({ artifactDir: dir('co-integrity-'), ...options }),
}

describe.each(Object.entries(storages))('the blocks of one result stand or fall together (%s)', (_, make) => {
  test('two 60 KB blocks under a 100 KB budget: refused whole, nothing stored', async () => {
    const storage = make({ maxBytes: 100_000 })
    const plugin = new ContextOffloader({ storage })
    const blocks = [new TextBlock('a'.repeat(60_000)), new TextBlock('b'.repeat(60_000))]
    await expect(plugin.offload(blocks, { key: 'two' })).rejects.toThrow(/offload failed/)
    expect((await storage.stats()).artifacts).toBe(0)
    // Through the hook: the result stays as it is (the default), or only the preview is kept.
    const hooked = make({ maxBytes: 100_000 })
    const kept = await new Driven(new ContextOffloader({ storage: hooked })).offload(blocks)
    expect(kept.content.map((b: any) => b.text.length)).toEqual([60_000, 60_000])
    const truncated = await new Driven(new ContextOffloader({ storage: make({ maxBytes: 100_000 }), onStorageError: 'truncate' })).offload(blocks)
    expect(truncated.content[0].text).toMatch(/^\[Truncated: 2 blocks, .*do not fit the storage's maxBytes/)
    expect((await storage.stats()).artifacts).toBe(0)
    expect((await hooked.stats()).artifacts).toBe(0)
    // Blocks that fit together are stored together.
    const fits = await plugin.offload([new TextBlock('c'.repeat(40_000)), new TextBlock('d'.repeat(40_000))], { key: 'fits' })
    expect(fits.references).toHaveLength(2)
    for (const r of fits.references) expect((await storage.retrieve(r.reference)).content.length).toBe(40_000)
  })

  test('a block evicted by a concurrent store before the others are stored fails the offload, and the rest is removed', async () => {
    const storage = make({ maxBytes: 80_000 })
    await storage.store('old', new Uint8Array(10_000), 'text/plain')
    // A store that, once the first block is stored, lets another writer fill the budget
    // (inline stores, and stores on a worker thread: stores under a budget into files).
    const real = storage[NATIVE]
    let stored = 0
    const intrude = async () => {
      stored += 1
      if (stored !== 1) return
      const outcome = real.storeBytesNow('intruder', new Uint8Array(60_000), 'text/plain') ?? (await real.storeBytes('intruder', new Uint8Array(60_000), 'text/plain'))
      expect(outcome.byteLength).toBe(60_000)
    }
    let pending: Promise<void> = Promise.resolve()
    const racing = new Proxy(real, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        if (typeof prop === 'string' && /^store(Latin1|Utf16|Text|Bytes|Encoded)(Now)?$/.test(prop)) {
          return (...args: unknown[]) => {
            const outcome = value.apply(target, args)
            if (outcome instanceof Promise) return outcome.then(async (o) => (await intrude(), o))
            if (outcome != null) pending = intrude()
            return outcome
          }
        }
        return value.bind(target)
      },
    })
    const view = Object.create(storage)
    Object.defineProperty(view, NATIVE, { value: racing })
    const content = [new TextBlock('x'.repeat(30_000)), new TextBlock('y'.repeat(30_000))]
    const texts = new Map([[0, 'x'.repeat(30_000)], [1, 'y'.repeat(30_000)]])
    const stores = storeBlocks(view, content, 'k', { texts, nativeTexts: new Map(), utf8: new Map(), bytesOf: () => [30_000, 30_000] })
    await expect(stores).rejects.toThrow(/evicted/)
    await pending
    expect(stored).toBe(2)
    // Neither block of the failed offload remains (whichever of the intruder and the
    // second block was stored last evicted the other).
    await new Promise((r) => setTimeout(r, 50))
    const left = await real.listArtifacts()
    expect(left.filter((a: any) => a.bytes === 30_000)).toEqual([])
    expect(left.every((a: any) => a.bytes === 60_000)).toBe(true)
  })
})

describe('opaque ids', () => {
  test('a session id of any length gets ids that resolve (files)', { timeout: 60_000 }, async () => {
    const path = dir('co-longid-')
    const storage = new FileStorage(path)
    for (const length of [1, 96, 97, 191, 192, 300, 5_000]) {
      const sessionId = 'a'.repeat(length)
      const plugin = new ContextOffloader({ storage, references: 'opaque', retrieval: 'extended' })
      const agent = new Agent({ model: new ScriptedModel(), printer: false, plugins: [plugin], sessionManager: sessionManagerFor(sessionId, new FileSnapshotStorage(dir('co-longid-s-'))) } as any)
      const out = await plugin.offload(`line one ${length}\nline two`, { key: `k${length}`, agent: agent as any })
      const id = out.references[0].reference
      expect(id).toMatch(/^ref_[A-Za-z0-9_-]{16}$/)
      expect(await toolAnswer(plugin.getTools()[0], { reference: id }, agent)).toBe(`line one ${length}\nline two`)
      expect(sessionSegment(sessionId).length).toBeLessThanOrEqual(128)
    }
    const segments = readdirSync(join(path, MANIFEST_NAMESPACE))
    expect(segments.every((s) => Buffer.byteLength(s) <= 128)).toBe(true)
    // Ids of more than 96 bytes (97, 191, 192, 300 and 5,000) are hashed.
    expect(segments.filter((s) => s.startsWith('~'))).toHaveLength(5)
  })

  test('an entry that cannot be written fails the offload: no dead id, and its block is removed', async () => {
    const path = dir('co-deadid-')
    // A file where the manifest's directory goes: no entry can be written.
    writeFileSync(join(path, MANIFEST_NAMESPACE), 'in the way')
    const storage = new FileStorage(path)
    const plugin = new ContextOffloader({ storage, references: 'opaque' })
    await expect(plugin.offload('some text\n'.repeat(100), { key: 'k', sessionId: 'user-1' })).rejects.toThrow(/offload failed/)
    const truncating = new ContextOffloader({ storage, references: 'opaque', onStorageError: 'truncate' })
    const result = await truncating.offload('more text\n'.repeat(2_000), { key: 'k2', sessionId: 'user-1' })
    expect(result.truncated).toBe(true)
    expect(result.references).toEqual([])
    expect(result.text).toMatch(/^\[Truncated: 1 blocks/)
    expect(result.text).not.toMatch(/ref_/)
    await new Promise((r) => setTimeout(r, 50))
    expect(readdirSync(path).filter((n) => /^\d+_\d+_/.test(n))).toEqual([])
  })

  test('session ids that differ only in an unpaired surrogate are refused, not merged', async () => {
    const storage = new InMemoryStorage()
    const plugin = new ContextOffloader({ storage })
    for (const bad of ['a\uD800', 'a\uDC00', '\uDFFFb']) {
      await expect(plugin.offload('x'.repeat(20_000), { key: 'k', sessionId: bad })).rejects.toThrow(/unpaired surrogate/)
      await expect(storage.deleteSession(bad)).rejects.toThrow(/unpaired surrogate/)
      expect(() => sessionSegment(bad)).toThrow(/unpaired surrogate/)
      expect(() => tagged(storage, bad, null)).toThrow(/unpaired surrogate/)
    }
    await plugin.offload('x'.repeat(20_000), { key: 'k', sessionId: 'a\uD83D\uDE00' })
    expect(Object.keys((await storage.stats()).sessions)).toEqual(['a\uD83D\uDE00'])
    expect(await storage.deleteSession('a\uFFFD')).toBe(0)
    expect(await storage.deleteSession('a\uD83D\uDE00')).toBe(1)
  })

  test('after a restart, an unknown id costs the reads an issued one costs, and never a listing', { timeout: 120_000 }, async () => {
    const path = dir('co-decoy-')
    /** A FileStorage whose manifest reads and listings are counted. */
    class Counting extends FileStorage {
      reads = 0
      lists = 0
      namespace(prefix: string) {
        const view: any = super.namespace(prefix)
        const self = this
        return { ...view, read: (k: string) => (self.reads++, view.read(k)), list: (p: string) => (self.lists++, view.list(p)), write: view.write, delete: view.delete }
      }
    }
    const sessionId = 'session-decoy'
    const agentIn = (plugin: any) => new Agent({ model: new ScriptedModel(), printer: false, plugins: [plugin], sessionManager: sessionManagerFor(sessionId, new FileSnapshotStorage(dir('co-decoy-s-'))) } as any)
    const first = new ContextOffloader({ storage: new Counting(path), references: 'opaque' })
    const agent = agentIn(first)
    const ids: string[] = []
    for (let i = 0; i < 300; i++) ids.push((await first.offload(`entry ${i}\n`.repeat(10), { key: `k${i}`, agent: agent as any })).references[0].reference)
    const cost = async (id: string) => {
      const storage = new Counting(path)
      const plugin = new ContextOffloader({ storage, references: 'opaque' })
      const answer = await toolAnswer(plugin.getTools()[0], { reference: id }, agentIn(plugin))
      return { answer, reads: storage.reads, lists: storage.lists }
    }
    const issued = await cost(ids[7]!)
    expect(issued.answer).toBe('entry 7\n'.repeat(10))
    const unknown = await cost('ref_AAAAAAAAAAAAAAAA')
    expect(unknown.answer).toBe('Error: reference not found: ref_AAAAAAAAAAAAAAAA')
    expect(unknown).toMatchObject({ reads: issued.reads, lists: 0 })
    expect(issued.lists).toBe(0)
    expect(issued.reads).toBeLessThanOrEqual(2)
  })
})

describe('deleting a session', () => {
  test('removes its manifest and the directory whose name would tell its id', async () => {
    const path = dir('co-delsession-')
    const storage = new FileStorage(path)
    const plugin = new ContextOffloader({ storage, references: 'opaque' })
    await plugin.offload('text\n'.repeat(100), { key: 'k', sessionId: 'secret-session' })
    await plugin.offload('text\n'.repeat(100), { key: 'k2', sessionId: 'other' })
    const segment = sessionSegment('secret-session')
    expect(existsSync(join(path, MANIFEST_NAMESPACE, segment))).toBe(true)
    expect(await storage.deleteSession('secret-session')).toBe(1)
    expect(existsSync(join(path, MANIFEST_NAMESPACE, segment))).toBe(false)
    expect(readdirSync(join(path, MANIFEST_NAMESPACE))).toEqual([sessionSegment('other')])
  })
})

describe('the manifest with path references', () => {
  test('list shows what a persisted session offloaded, and a long path never fails the offload', { timeout: 60_000 }, async () => {
    const path = dir('co-listpaths-')
    const storage = new FileStorage(path)
    const plugin = new ContextOffloader({ storage, retrieval: 'extended' })
    const agent = new Agent({ model: new ScriptedModel(), printer: false, plugins: [plugin], sessionManager: sessionManagerFor('paths-session', new FileSnapshotStorage(dir('co-listpaths-s-'))) } as any)
    const short = await plugin.offload('first line\nsecond', { key: 'k1', agent: agent as any })
    const long = await plugin.offload('another\nresult', { key: 'x'.repeat(230), agent: agent as any })
    const listing = await toolAnswer(plugin.getTools()[0], { list: true }, agent)
    expect(listing).toMatch(/^\[Offloaded in this session: 2, newest first/)
    expect(listing).toContain(short.references[0].reference)
    expect(listing).toContain(long.references[0].reference)
    expect(listing).toContain('| first line')
    // After a restart, the same.
    const again = new ContextOffloader({ storage: new FileStorage(path), retrieval: 'extended' })
    const agent2 = new Agent({ model: new ScriptedModel(), printer: false, plugins: [again], sessionManager: sessionManagerFor('paths-session', new FileSnapshotStorage(dir('co-listpaths-s-'))) } as any)
    expect((await toolAnswer(again.getTools()[0], { list: true }, agent2)).split('\n').slice(2)).toEqual(listing.split('\n').slice(2))
  })

  test('entries an earlier release kept under a long session id are found, moved, and deleted with the session', { timeout: 60_000 }, async () => {
    const path = dir('co-legacy-')
    const sessionId = 's'.repeat(113)
    const storage = new FileStorage(path)
    // What an earlier release wrote: the id's base64url as the session's segment.
    const first = new ContextOffloader({ storage, references: 'opaque' })
    const { references } = await first.offload('legacy content\n', { key: 'k', sessionId })
    const id = references[0].reference
    const segment = sessionSegment(sessionId)
    const legacy = Buffer.from(sessionId).toString('base64url')
    expect(segment.startsWith('~')).toBe(true)
    const { renameSync, rmSync } = await import('node:fs')
    rmSync(join(path, MANIFEST_NAMESPACE, segment, 'sample'))
    renameSync(join(path, MANIFEST_NAMESPACE, segment), join(path, MANIFEST_NAMESPACE, legacy))
    const plugin = new ContextOffloader({ storage: new FileStorage(path), references: 'opaque', retrieval: 'extended' })
    const agent = new Agent({ model: new ScriptedModel(), printer: false, plugins: [plugin], sessionManager: sessionManagerFor(sessionId, new FileSnapshotStorage(dir('co-legacy-s-'))) } as any)
    expect(await toolAnswer(plugin.getTools()[0], { reference: id }, agent)).toBe('legacy content\n')
    expect(existsSync(join(path, MANIFEST_NAMESPACE, legacy))).toBe(false)
    expect(await toolAnswer(plugin.getTools()[0], { list: true }, agent)).toContain(id)
    // An entry left under the old segment goes with the session too.
    mkdirSync(join(path, MANIFEST_NAMESPACE, legacy))
    writeFileSync(join(path, MANIFEST_NAMESPACE, legacy, `${id}.json`), '{}')
    expect(await new FileStorage(path).deleteSession(sessionId)).toBe(1)
    expect(readdirSync(join(path, MANIFEST_NAMESPACE))).toEqual([])
  })

  test('after a session is deleted and offloaded to again, a restarted lookup lists names once and reads two entries at most', { timeout: 60_000 }, async () => {
    const path = dir('co-resample-')
    const storage = new FileStorage(path)
    const plugin = new ContextOffloader({ storage, references: 'opaque' })
    await plugin.offload('one\n', { key: 'a', sessionId: 's-resample' })
    await storage.deleteSession('s-resample')
    const ids: string[] = []
    for (let i = 0; i < 30; i++) ids.push((await plugin.offload(`entry ${i}\n`, { key: `k${i}`, sessionId: 's-resample' })).references[0].reference)
    class Counting extends FileStorage {
      reads = 0
      lists = 0
      namespace(prefix: string) {
        const view: any = super.namespace(prefix)
        const self = this
        return { ...view, read: (k: string) => (self.reads++, view.read(k)), list: (p: string) => (self.lists++, view.list(p)) }
      }
    }
    const cost = async (id: string) => {
      const counting = new Counting(path)
      const fresh = new ContextOffloader({ storage: counting, references: 'opaque' })
      const agent = new Agent({ model: new ScriptedModel(), printer: false, plugins: [fresh], sessionManager: sessionManagerFor('s-resample', new FileSnapshotStorage(dir('co-resample-s-'))) } as any)
      const answer = await toolAnswer(fresh.getTools()[0], { reference: id }, agent)
      return { answer, reads: counting.reads, lists: counting.lists }
    }
    const unknown = await cost('ref_BBBBBBBBBBBBBBBB')
    expect(unknown.answer).toBe('Error: reference not found: ref_BBBBBBBBBBBBBBBB')
    expect(unknown.lists).toBeLessThanOrEqual(1)
    expect(unknown.reads).toBeLessThanOrEqual(3)
    // The sample was written back: the next restart reads it and nothing else.
    const issued = await cost(ids[3]!)
    expect(issued.answer).toBe('entry 3\n')
    expect(issued).toMatchObject({ lists: 0, reads: 2 })
  })
})
