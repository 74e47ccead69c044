// A memory storage tells V8 how much content it holds (external memory), so that V8
// collects dropped storages as it collects the ArrayBuffers of a JavaScript storage.
// Without it, a server that made one agent per request, each offloading into its own
// InMemoryStorage, kept hundreds of megabytes of dropped content mapped until V8
// happened to run a full collection for reasons of its own heap.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as native from '../binding.cjs'
import { gc } from './helpers/heap.js'
import { tempDir } from './helpers/harness.js'

const MB = 1 << 20
/** What the process's memory storages account as external memory (Node 22's `external` does not show it). */
const external = (): number => (native as any).heldMemoryReported()
const turn = () => new Promise((resolve) => setImmediate(resolve))

/** Collects until the finalizers of what was dropped have run. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc()
    await turn()
  }
}

describe('external memory of a memory storage', () => {
  it('follows what is stored and removed, once for all handles, and is withdrawn when the storage is collected', async () => {
    // 1 MiB: the most a memory store copies on the JavaScript thread.
    const content = Buffer.alloc(MB, 97)
    await collect()
    const start = external()
    let store: any = native.NativeStore.memory(null)
    let view: any = store.withTags('session-a', null)
    const near = (actual: number, expected: number) => expect(Math.abs(actual - expected), `${actual} vs ${expected}`).toBeLessThan(MB / 8)

    const first = store.storeBytesNow('k1', content, 'text/plain').reference
    near(external() - start, 1 * MB)
    // A tagged view stores into the same store: counted once, by what the store holds.
    view.storeBytesNow('k2', content, 'text/plain')
    near(external() - start, 2 * MB)
    const text = 'é'.repeat(300_000)
    const outcome = view.storeLatin1Now('k3', text, 'text/plain')
    expect(outcome).toMatch(/^600000:/)
    near(external() - start, 2 * MB + 600_000)
    expect(store.delete(first)).toBe(true)
    near(external() - start, 1 * MB + 600_000)
    // A store on a worker thread is counted when its promise settles.
    const later = (await store.storeBytes('k4', content, 'text/plain')).reference
    near(external() - start, 2 * MB + 600_000)
    expect(await view.discard([later])).toBe(1)
    near(external() - start, 1 * MB + 600_000)
    store.clear()
    near(external() - start, 0)
    store.storeBytesNow('k5', content, 'text/plain')
    near(external() - start, 1 * MB)

    // Dropping one handle withdraws nothing: the other still holds the store.
    const collected: string[] = []
    const registry = new FinalizationRegistry((name: string) => collected.push(name))
    registry.register(store, 'store')
    registry.register(view, 'view')
    store = undefined
    await collect()
    expect(collected).toEqual(['store'])
    near(external() - start, 1 * MB)
    view.storeBytesNow('k6', content, 'text/plain')
    near(external() - start, 2 * MB)
    view = undefined
    await collect()
    expect(collected).toEqual(['store', 'view'])
    near(external() - start, 0)
  })

  it('counts what expiry removes, and matches what is held after seeded races of stores, removals and sweeps', async () => {
    await collect()
    const start = external()
    const store: any = native.NativeStore.memory(null)
    store.setNow(1_000)
    const shortLived = store.withTags(null, 1_000)
    shortLived.storeBytesNow('k', Buffer.alloc(300_000, 99), 'text/plain')
    expect(external() - start).toBe(300_000)
    store.setNow(5_000)
    expect(await store.cleanupExpired()).toBe(1)
    expect(external() - start).toBe(0)

    // Seeded operations from both handles, worker ones left in flight while others run.
    let seed = 7
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    const refs: string[] = []
    const removedByReads = { answers: 0, retrieves: 0 }
    for (let round = 0; round < 20; round++) {
      const pending: Promise<unknown>[] = []
      for (let i = 0; i < 30; i++) {
        const handle = next(2) ? store : shortLived
        const bytes = Buffer.alloc(1 + next(200_000), 100)
        switch (next(7)) {
          case 0:
          case 1: {
            const r = handle.storeBytesNow(`k${round}-${i}`, bytes, 'text/plain')
            if (r) refs.push(r.reference)
            break
          }
          case 2:
            pending.push(handle.storeBytes(`a${round}-${i}`, bytes, 'text/plain').then((r: any) => refs.push(r.reference)))
            break
          case 3:
            if (refs.length) store.delete(refs.splice(next(refs.length), 1)[0])
            break
          case 4:
            if (refs.length) pending.push(handle.discard(refs.splice(0, next(refs.length))))
            break
          case 5:
            store.setNow(5_000 + round * 400 + i * 10)
            pending.push(store.cleanupExpired())
            break
          default:
            if (next(10) === 0) store.clear()
        }
      }
      await Promise.all(pending)
      expect(external() - start, `round ${round}`).toBe(store.byteLength)
      // Reading an expired block removes it: retrieves and answers on the JavaScript
      // thread account for it. The clock moves past this round's short-lived blocks.
      store.setNow(5_000 + round * 400 + 2_000)
      const read = refs.splice(Math.max(0, refs.length - 4 - next(4)))
      const answered = read.splice(0, read.length >> 1)
      let before = store.byteLength
      for (const ref of answered) {
        try {
          store.answerNow(ref, { kind: 'full' }, 1, 1_000)
        } catch (err) {
          expect(String(err)).toMatch(/not found|expired/i)
        }
      }
      expect(external() - start, `round ${round}, after answers`).toBe(store.byteLength)
      removedByReads.answers += before - store.byteLength
      before = store.byteLength
      await Promise.all(read.map((ref) => shortLived.retrieve(ref).catch(() => undefined)))
      expect(external() - start, `round ${round}, after retrieves`).toBe(store.byteLength)
      removedByReads.retrieves += before - store.byteLength
    }
    // The reads did remove expired blocks (else this test would not reach that path).
    expect(removedByReads.answers).toBeGreaterThan(0)
    expect(removedByReads.retrieves).toBeGreaterThan(0)
  })

  it('leaves a file storage out: its content is on disk', async () => {
    const dir = tempDir('held-file-')
    const content = Buffer.alloc(4 * MB, 98)
    const store: any = native.NativeStore.file(dir.path, false, false)
    await store.open()
    await collect()
    const start = external()
    await store.storeBytes('k', content, 'text/plain')
    expect(Math.abs(external() - start)).toBeLessThan(MB / 4)
    dir.cleanup()
  })

  it('bounds the memory of a server that makes one agent per request (real agent loop, child process)', { timeout: 120_000 }, () => {
    // 300 requests of 2 MB each: 600 MB stored in all. Before, the peak was about 760 MB
    // of resident memory; now about 290 MB (the bound leaves room for a busy machine).
    const fixture = fileURLToPath(new URL('./fixtures/per-request-agents.mjs', import.meta.url))
    const r = spawnSync(process.execPath, [fixture, '300', String(2 * MB)], { encoding: 'utf8', timeout: 110_000 })
    expect(r.status, r.stderr).toBe(0)
    const { peakRss } = JSON.parse(r.stdout)
    expect(peakRss / MB).toBeLessThan(450)
  })
})
