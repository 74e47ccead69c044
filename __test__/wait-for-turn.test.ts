// The queue of callers waiting for a turn at inline native work (lib/native.js
// waitForTurn): no caller is left waiting by fake timers, and letting tens of thousands
// go costs about as much per caller as letting a few go.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { InMemoryStorage } from '../index.js'
import { Offloader } from '../core.js'

const countable = process.platform !== 'win32'
const bytes = new TextEncoder().encode('x'.repeat(100))

/** Stores into `storage` until one of them is told to yield (its promise stays pending). */
function storeUntilOneWaits(storage: InMemoryStorage) {
  // (a count, not a clock: fake timers may stop `performance.now()`)
  const started = Date.now()
  const pending: Promise<string>[] = []
  for (let i = 0; i < 20_000 && Date.now() - started < 20; i++) pending.push(storage.store(`k${n++}`, bytes))
  return pending
}

let n = 0
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => 'resolved'), new Promise((r) => setTimeout(() => r('still waiting'), ms))])

describe('waitForTurn', () => {
  afterEach(() => vi.useRealTimers())

  it.runIf(countable)('a wake-up scheduled under fake timers that were then removed does not wedge every later caller', async () => {
    // A test (or app) that fakes timers while an offload yields: the immediate that lets
    // waiters go is a fake one, dropped when real timers come back. The queue must not
    // believe forever that a release is scheduled: later callers told to yield hang.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval'] })
    const storage = new InMemoryStorage(null)
    storeUntilOneWaits(storage) // some wait on a fake immediate
    vi.useRealTimers()
    await new Promise((r) => setTimeout(r, 5))
    const later = storeUntilOneWaits(storage)
    expect(await within(Promise.all(later), 2000)).toBe('resolved')
  })
})

describe('many waiters', () => {
  it.runIf(countable)('letting tens of thousands of waiting callers go costs about as much per caller as letting a few thousand go', async () => {
    // Taking callers off the front of a plain array moves the whole array once it is too
    // large for V8 to trim in place (past about 16k entries): 100k waiters took 5.8 s
    // (58 µs a store) against 0.6 s with a head index.
    const drainPerStore = async (count: number) => {
      const storage = new InMemoryStorage(null)
      await storage.store('warm', bytes)
      await new Promise((r) => setTimeout(r, 5))
      const all = Array.from({ length: count }, (_, i) => storage.store(`m${i}`, bytes))
      const t0 = performance.now()
      await Promise.all(all)
      return (performance.now() - t0) / count
    }
    const small = Math.min(await drainPerStore(8_000), await drainPerStore(8_000))
    const large = await drainPerStore(80_000)
    expect(large / small).toBeLessThan(3)
  }, 120_000)
})

describe('waiting callers and the storage\'s own background work', () => {
  it('chains of 8 agents, the background sweep and the manifest sweeps all finish, with timers firing throughout', async () => {
    // The sweep (every second) removes what expired by the storage's clock while the
    // chains store; with extended retrieval each offload also records manifest entries,
    // whose sweeps wait for their turn in the same queue as the stores.
    let now = Date.now()
    const storage = new InMemoryStorage({ ttlSeconds: 1, cleanupIntervalSeconds: 1, clock: () => now })
    const offloader = new Offloader({ storage, maxResultTokens: 200, previewTokens: 20, retrieval: 'extended' })
    const text = 'a line of a tool result\n'.repeat(400)
    const ticks: number[] = []
    const interval = setInterval(() => {
      ticks.push(performance.now())
      now += 50 // the storage's clock runs 50x faster than the wall clock
    }, 1)
    const started = performance.now()
    let stored = 0
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, agent) => {
          for (let i = 0; performance.now() - started < 1_600; i++) {
            const result = await offloader.offloadResult({ toolName: 't', toolCallId: `a${agent}-${i}`, sessionId: `s${agent}`, content: text })
            expect(result).not.toBeNull()
            stored += 1
          }
        }),
      )
      // Let the last sweep finish.
      await new Promise((resolve) => setTimeout(resolve, 1_200))
    } finally {
      clearInterval(interval)
      storage.close()
    }
    const stats = await storage.stats()
    expect(stored).toBeGreaterThan(100)
    // The sweep ran meanwhile: most of what was stored has expired and is gone.
    expect(stats.artifacts).toBeLessThan(stored / 2)
    // Timers kept firing: no stretch of more than 100 ms without a tick during the chains.
    const during = ticks.filter((t) => t > started && t < started + 1_600)
    const longest = during.slice(1).reduce((max, t, i) => Math.max(max, t - during[i]), 0)
    expect(longest).toBeLessThan(100)
  }, 30_000)
})
