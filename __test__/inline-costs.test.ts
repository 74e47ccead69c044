// "Off the event loop", attacked where work used to run inline: durable stores (fsync),
// the first store into a directory with a long journal (one per agent view, before),
// exact token counts of long CJK text, and storages that override store/retrieve.
// What the event loop pays is the synchronous part of each call: measured directly.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import * as native from '../binding.cjs'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { NATIVE, PENDING } from '../lib/storage/native-backed.js'
import { Driven, TextBlock, tempDir, textOf } from './helpers/harness.js'
import { gc } from './helpers/heap.js'

const work = tempDir('co-inline-')
afterAll(() => work.cleanup())

/** Milliseconds spent in the synchronous part of `start()` (before it returns its promise), and the promise. */
function syncPart<T>(start: () => Promise<T>): { ms: number; done: Promise<T> } {
  const t0 = performance.now()
  const done = start()
  return { ms: performance.now() - t0, done }
}

/** A journal recording `count` artifacts (the files themselves need not exist). */
function journalOf(count: number): string {
  return Array.from({ length: count }, (_, i) => `{"f":"1700000000000_${i}_k${i}.txt","t":"text/plain"}\n`).join('')
}

/** Milliseconds of CPU time the thread of `/proc/<task>/schedstat` has used (Linux). */
function cpuMs(schedstat: string): number {
  return Number(readFileSync(schedstat, 'latin1').split(' ')[0]) / 1e6
}

/** CPU milliseconds used by this process's thread named `name`, or `null` when there is none (Linux). */
function threadCpuMs(name: string): number | null {
  for (const task of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${task}/comm`, 'latin1').trim() === name) return cpuMs(`/proc/self/task/${task}/schedstat`)
    } catch {
      // the thread ended meanwhile
    }
  }
  return null
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** The longest gap between 1 ms interval ticks while `run` runs. */
async function maxGapDuring(run: () => Promise<unknown>): Promise<number> {
  let last = performance.now()
  let maxGap = 0
  const interval = setInterval(() => {
    const now = performance.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
  }, 1)
  try {
    await new Promise((r) => setTimeout(r, 5))
    last = performance.now()
    await run()
  } finally {
    clearInterval(interval)
  }
  return maxGap
}

describe('work that must not run on the event loop', () => {
  it('small file stores run inline only into an open directory and never with fsync', async () => {
    // This test is about where a store may run, not about a slow disk: no write here
    // counts as slow (on a loaded machine one could pause inline writes for a second),
    // and a pause left by an earlier test has ended.
    native.setSlowInlineWriteMicros(4_000_000_000)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    try {
      const bytes = new Uint8Array(1024)
      const plain = native.NativeStore.file(join(work.path, 'policy'), false)
      expect(plain.storeBytesNow('k', bytes, 'text/plain', false), 'an unopened directory is opened on a worker').toBeNull()
      await plain.storeBytes('k', bytes, 'text/plain', false)
      expect(plain.storeBytesNow('k', bytes, 'text/plain', false)?.reference).toMatch(/_k\.txt$/)
      expect(plain.view().storeBytesNow('k', bytes, 'text/plain', false), 'a view shares the open directory').not.toBeNull()
      const durable = native.NativeStore.file(join(work.path, 'policy'), true)
      await durable.storeBytes('k', bytes, 'text/plain', false)
      expect(durable.storeBytesNow('k', bytes, 'text/plain', false), 'fsyncs never run inline').toBeNull()
    } finally {
      native.setSlowInlineWriteMicros(1_000)
    }
  })

  it('durable 1 KB stores fsync on a worker thread', async () => {
    const storage = new FileStorage({ artifactDir: join(work.path, 'durable'), durable: true })
    await storage.store('warm', new Uint8Array(1024), 'text/plain')
    const times: number[] = []
    for (let i = 0; i < 30; i++) {
      const { ms, done } = syncPart(() => storage.store(`k${i}`, new Uint8Array(1024).fill(65), 'text/plain'))
      times.push(ms)
      await done
    }
    expect(median(times), times.map((t) => t.toFixed(2)).join(' ')).toBeLessThan(1)
  })

  it('the first store of three agents into a directory with 100,000 artifacts opens it once, off the loop', async () => {
    const dir = join(work.path, 'big')
    const storage = new FileStorage(dir)
    await storage.store('seed', new TextEncoder().encode('x'), 'text/plain')
    writeFileSync(join(dir, '.metadata.journal'), journalOf(100_000))
    // Reading the journal inline would cost every trial tens of milliseconds; a stray
    // pause of the machine costs one trial at most, so the best of three trials counts.
    const trials: number[][] = []
    for (let trial = 0; trial < 3; trial++) {
      gc()
      const fresh = new FileStorage(dir) // opens the directory afresh
      // Three agents' views (what the plugin gives each agent), each storing for the first time.
      const views = [0, 1, 2].map(() => (fresh as any)._pluginView())
      const times: number[] = []
      const stored: Promise<string>[] = []
      for (const view of views) {
        const { ms, done } = syncPart(() => view.store('first', new TextEncoder().encode('y'.repeat(400)), 'text/plain'))
        times.push(ms)
        stored.push(done as Promise<string>)
      }
      const refs = await Promise.all(stored)
      // Three artifacts (same key, same millisecond: the names never collide).
      expect(new Set(refs).size).toBe(3)
      for (const ref of refs) expect(new TextDecoder().decode((await fresh.retrieve(ref)).content)).toBe('y'.repeat(400))
      trials.push(times)
    }
    const worst = trials.map((times) => Math.max(...times))
    expect(Math.min(...worst), trials.map((times) => times.map((t) => t.toFixed(2)).join(' ')).join(' | ')).toBeLessThan(5)
  })

  it('agents storing while the directory opens wait for the opening, then store inline: one worker task', async () => {
    // Each store queued on the worker pool wakes a thread; while one reads a journal of
    // 100,000 lines, the others only wait for it, and on two busy cores the JavaScript
    // thread waited in that wake-up (glibc's pthread_cond_signal) for milliseconds.
    native.setSlowInlineWriteMicros(4_000_000_000)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const proto = native.NativeStore.prototype as any
    const methods = ['open', 'storeText', 'storeEncoded', 'storeBytes'] as const
    const originals = methods.map((m) => proto[m])
    const queued: string[] = []
    methods.forEach((m, i) => {
      proto[m] = function (this: unknown, ...args: unknown[]) {
        queued.push(m)
        return originals[i].apply(this, args)
      }
    })
    try {
      const dir = join(work.path, 'opening')
      mkdirSync(dir)
      writeFileSync(join(dir, '.metadata.journal'), journalOf(100_000))
      const plugin = new ContextOffloader({ storage: new FileStorage(dir), maxResultTokens: 100, previewTokens: 10 })
      const agents = [0, 1, 2].map(() => new Driven(plugin))
      const texts = agents.map((_, i) => `agent ${i} line\n`.repeat(300))
      const results = await Promise.all(agents.map((driven, i) => driven.offload([new TextBlock(texts[i]!)])))
      // The directory is opened once; every result then stores inline.
      expect(queued).toEqual(['open'])
      for (const [i, result] of results.entries()) {
        const text = textOf(JSON.parse(JSON.stringify(result)))
        const ref = /\n {2}(\S+) \(text/.exec(text)![1]!
        expect(textOf(await agents[i]!.retrieve({ reference: ref }))).toBe(texts[i])
      }
    } finally {
      methods.forEach((m, i) => (proto[m] = originals[i]))
      native.setSlowInlineWriteMicros(1_000)
    }
  })

  it.runIf(process.platform === 'linux')('a file store with a long catalog is freed off the JavaScript thread (Linux: thread CPU times)', async () => {
    // A store's native half is freed by its finalizer, on the JavaScript thread: freeing
    // the catalog of 200,000 artifacts held it for tens of milliseconds (400,000 here:
    // freeing a catalog got cheaper since, and the background thread must measurably work).
    const dir = join(work.path, 'freed')
    mkdirSync(dir)
    writeFileSync(join(dir, '.metadata.journal'), journalOf(400_000))
    let storage: FileStorage | undefined = new FileStorage(dir)
    await storage.store('open', new Uint8Array(1), 'text/plain')
    const freeing = threadCpuMs('offload-free') ?? 0
    storage = undefined
    gc()
    gc()
    const jsThread = cpuMs('/proc/thread-self/schedstat')
    // Node runs native finalizers from an immediate.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    const spentHere = cpuMs('/proc/thread-self/schedstat') - jsThread
    let spentThere = 0
    for (let waited = 0; waited < 10_000 && spentThere < 5; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      spentThere = (threadCpuMs('offload-free') ?? 0) - freeing
    }
    expect(spentThere, 'the catalog was freed on the background thread').toBeGreaterThanOrEqual(5)
    expect(spentHere, `JavaScript thread ${spentHere.toFixed(1)} ms, background ${spentThere.toFixed(1)} ms`).toBeLessThan(spentThere)
  })

  it.runIf(process.platform === 'linux')('an in-memory store freed by the last holder of its shared counter is freed off the JavaScript thread (Linux: thread CPU times)', async () => {
    // The counter an InMemoryStorage shares with JavaScript (an external ArrayBuffer) keeps
    // its native store alive; when the buffer goes last, its finalizer drops the store.
    let storage: any = new InMemoryStorage()
    let counter: Uint32Array | undefined = storage[PENDING].counter
    expect(counter).toBeInstanceOf(Uint32Array)
    let nativeStore = storage[NATIVE]
    const block = new Uint8Array(64)
    for (let i = 0; i < 300_000; i++) nativeStore.storeBytesNow(`k${i}`, block, 'text/plain')
    expect(storage.size).toBe(300_000)
    // Node runs native finalizers from an immediate after the collection.
    const finalize = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    }
    storage = undefined
    nativeStore = undefined
    gc()
    gc()
    await finalize()
    // The storage and its handle are gone; the counter (read here, so still alive) holds the store.
    expect(counter![0]).toBe(300_000)
    const freeing = threadCpuMs('offload-free') ?? 0
    counter = undefined
    gc()
    gc()
    const jsThread = cpuMs('/proc/thread-self/schedstat')
    await finalize()
    const spentHere = cpuMs('/proc/thread-self/schedstat') - jsThread
    // Until the background thread is done (its time stops growing).
    let spentThere = 0
    for (let waited = 0, last = -1; waited < 10_000 && (spentThere < 5 || spentThere !== last); waited += 50) {
      last = spentThere
      await new Promise((resolve) => setTimeout(resolve, 50))
      spentThere = (threadCpuMs('offload-free') ?? 0) - freeing
    }
    expect(spentThere, 'the store was freed on the background thread').toBeGreaterThanOrEqual(5)
    expect(spentHere, `JavaScript thread ${spentHere.toFixed(1)} ms, background ${spentThere.toFixed(1)} ms`).toBeLessThan(spentThere)
  })

  it('an exact o200k count of 250,000 CJK characters leaves timers running', { timeout: 60_000 }, async () => {
    const cjk = '漢字かなカナ한국어'.repeat(Math.ceil(250_000 / 9)).slice(0, 250_000)
    const driven = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', maxResultTokens: 100_000_000, previewTokens: 10, shouldOffload: () => true }),
    )
    await driven.offload([new TextBlock('warm up the vocabulary')])
    let text = ''
    const gap = await maxGapDuring(async () => {
      text = textOf({ toolResult: JSON.parse(JSON.stringify(await driven.offload([new TextBlock(cjk)]))).toolResult })
    })
    expect(text).toMatch(/^\[Offloaded: 1 blocks, [\d,]+ tokens\]/)
    // Counted inline, this blocked the loop for about 270 ms.
    expect(gap).toBeLessThan(50)
  })
})

describe('storages whose store/retrieve are overridden are called, as the SDK calls them', () => {
  it('a subclass and an instance patch both see every store and retrieve, also for search', async () => {
    const calls: string[] = []
    class Counted extends InMemoryStorage {
      async store(key: string, content: Uint8Array, contentType?: string) {
        calls.push(`store ${key}`)
        return super.store(key, content, contentType)
      }
      async retrieve(reference: string) {
        calls.push(`retrieve ${reference}`)
        return super.retrieve(reference)
      }
    }
    const patched = new FileStorage(join(work.path, 'patched'))
    const original = { store: patched.store.bind(patched), retrieve: patched.retrieve.bind(patched) }
    patched.store = async (key, content, contentType) => {
      calls.push(`store ${key}`)
      return original.store(key, content, contentType)
    }
    patched.retrieve = async (reference) => {
      calls.push(`retrieve ${reference}`)
      return original.retrieve(reference)
    }
    for (const make of [() => new Counted(), () => patched]) {
      calls.length = 0
      for (const options of [{}, { tokenizer: 'o200k_base' as const, preview: 'headTail' as const }]) {
        const storage = make()
        const driven = new Driven(new ContextOffloader({ storage, maxResultTokens: 50, previewTokens: 5, ...options }))
        const result = JSON.parse(JSON.stringify(await driven.offload([new TextBlock('alpha beta\n'.repeat(400))], { toolUseId: 't' })))
        const ref = /\n {2}(\S+) \(text/.exec(result.toolResult.content[0].text)![1]!
        expect(textOf(await driven.retrieve({ reference: ref, pattern: 'beta', context_lines: 0 }))).toMatch(/^\[400 matches/)
        expect(textOf(await driven.retrieve({ reference: ref }))).toBe('alpha beta\n'.repeat(400))
        expect(calls.filter((c) => c.startsWith('store'))).toHaveLength(1)
        expect(calls.filter((c) => c === `retrieve ${ref}`)).toHaveLength(2)
        calls.length = 0
      }
    }
  })
})
