// Runs of inline native work end when the event loop goes round. The turns are counted
// natively (a libuv check handle adds one to a counter of the addon's own at every
// turn, read through an ArrayBuffer), so an offload schedules no immediate of its own;
// a long chain of inline offloads still lets timers fire; the counting handle neither
// keeps a process alive nor stops a worker thread from exiting cleanly; and nothing
// done to the buffer makes it write anywhere else.
import { createHook } from 'node:async_hooks'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import * as ours from '../core.js'
import { native } from '../lib/native.js'

const indexUrl = new URL('../core.js', import.meta.url).href
const nativeUrl = new URL('../lib/native.js', import.meta.url).href
const countable = process.platform !== 'win32'

const turn = () => new Promise((resolve) => setImmediate(resolve))

/** Immediates created while `run` runs (async_hooks sees every one Node makes). */
async function immediatesDuring(run: () => Promise<unknown>): Promise<number> {
  let created = 0
  const hook = createHook({
    init(_id, type) {
      if (type === 'Immediate') created += 1
    },
  })
  hook.enable()
  try {
    await run()
  } finally {
    hook.disable()
  }
  return created
}

describe('the event loop turn counter', () => {
  it.runIf(countable)('counts one per turn of the loop', async () => {
    const counter = new Int32Array(native.countLoopTurns()!)
    await turn()
    const before = counter[0]
    for (let i = 0; i < 100; i++) await turn()
    // One turn per immediate (the immediates run one per turn here), none skipped; the
    // test runner's own messages may add a few turns.
    expect(counter[0] - before).toBeGreaterThanOrEqual(100)
    expect(counter[0] - before).toBeLessThanOrEqual(200)
    // Timers alone make turns too.
    const beforeTimer = counter[0]
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(counter[0]).toBeGreaterThan(beforeTimer)
  })

  it.runIf(countable)('arguments are ignored, and every call counts into memory of its own', async () => {
    const buffers = [undefined, null, 1, 'x', {}, new Int32Array(1), new ArrayBuffer(4)].map((arg) => (native.countLoopTurns as any)(arg))
    for (const buffer of buffers) {
      expect(buffer).toBeInstanceOf(ArrayBuffer)
      expect(buffer.byteLength).toBe(4)
    }
    expect(new Set(buffers).size).toBe(buffers.length)
    const before = buffers.map((b) => new Int32Array(b)[0])
    await turn()
    buffers.forEach((b, i) => expect(new Int32Array(b)[0]).toBeGreaterThan(before[i]))
  })

  it.runIf(countable)('the buffer transferred, detached or collected: no crash, nothing written elsewhere', () => {
    const script = `
      const { native } = await import(${JSON.stringify(nativeUrl)})
      const kept = []
      for (let i = 0; i < 50; i++) {
        const buffer = native.countLoopTurns()
        // Whatever the runtime allows of these (an external buffer may refuse some).
        try {
          if (i % 3 === 0) kept.push(new Int32Array(buffer.transfer()))
          else if (i % 3 === 1) structuredClone(buffer, { transfer: [buffer] })
          else new MessageChannel().port1.postMessage(buffer, [buffer])
        } catch {}
      }
      const before = kept.map((k) => k[0])
      for (let i = 0; i < 200; i++) {
        await new Promise((resolve) => setImmediate(resolve))
        for (let j = 0; j < 50; j++) new ArrayBuffer(256)
        if (i % 50 === 0) globalThis.gc?.()
      }
      // A transferred copy is a snapshot or the same memory: it never goes backwards.
      if (kept.some((k, i) => k[0] < before[i])) throw new Error('a counter went backwards')
      process.stdout.write('done')`
    const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
    expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({ status: 0, signal: null, stderr: '' })
    expect(run.stdout).toBe('done')
  })

  it.runIf(countable)('an offload to memory schedules no immediate', async () => {
    const agentless = new ours.Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const text = 'x'.repeat(10_000)
    await agentless.offloadResult({ toolName: 'warm', toolCallId: 'warm', content: text })
    await turn()
    const created = await immediatesDuring(() => agentless.offloadResult({ toolName: 't', toolCallId: 'one', content: text }))
    expect(created).toBe(0)
  })

  it('a chain of 3,000 inline offloads lets timers fire all along', async () => {
    const offloader = new ours.Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const text = 'line of a log\n'.repeat(2_000)
    const ticks: number[] = []
    const interval = setInterval(() => ticks.push(performance.now()), 1)
    await turn()
    const started = performance.now()
    try {
      for (let i = 0; i < 3_000; i++) {
        const result = await offloader.offloadResult({ toolName: 't', toolCallId: `call-${i}`, content: text })
        expect(result).not.toBeNull()
      }
    } finally {
      clearInterval(interval)
    }
    const ended = performance.now()
    const during = ticks.filter((t) => t > started && t < ended)
    // Without yielding, the whole chain runs in microtasks and no tick lands inside it.
    expect(during.length).toBeGreaterThan(5)
    // Ticks are spread over the chain, not bunched at its end: none of its halves goes without.
    const middle = (started + ended) / 2
    expect(during.some((t) => t < middle)).toBe(true)
    expect(during.some((t) => t >= middle)).toBe(true)
  })

  it.runIf(countable)('chains of many agents resumed in one turn share one run of inline work, not one each', async () => {
    // 16 agents' chains of inline offloads: when they yield, their immediates all run in
    // the same turn. Each chain resumed must not start a fresh 2 ms run (16 runs of 2 ms
    // would hold the loop for 32 ms); together they get one.
    const counter = new Int32Array(native.countLoopTurns()!)
    const offloaders = Array.from({ length: 16 }, () => new ours.Offloader({ maxResultTokens: 100, previewTokens: 10 }))
    const text = 'line of a log\n'.repeat(900)
    const firstByTurn = new Map<number, number>()
    const lastByTurn = new Map<number, number>()
    const mark = () => {
      const now = performance.now()
      if (!firstByTurn.has(counter[0])) firstByTurn.set(counter[0], now)
      lastByTurn.set(counter[0], now)
    }
    await turn()
    await Promise.all(
      offloaders.map(async (offloader, agent) => {
        for (let i = 0; i < 150; i++) {
          mark()
          await offloader.offloadResult({ toolName: 't', toolCallId: `a${agent}-${i}`, content: text })
          mark()
        }
      }),
    )
    const spans = [...firstByTurn].map(([t, first]) => lastByTurn.get(t)! - first).sort((a, b) => a - b)
    // Many turns, each short: at most one run (2 ms) and the store that ends it, give or
    // take the machine (a p90 well under the 32 ms sixteen runs would take).
    expect(spans.length).toBeGreaterThan(20)
    expect(spans[Math.floor(spans.length * 0.9)]).toBeLessThan(10)
  })

  it('worker threads that use the addon exit cleanly, also when terminated mid-run', async () => {
    const body = `
      const { parentPort } = await import('node:worker_threads')
      const ours = await import(${JSON.stringify(indexUrl)})
      const { native } = await import(${JSON.stringify(nativeUrl)})
      const offloader = new ours.Offloader({ maxResultTokens: 100, previewTokens: 10 })
      const result = await offloader.offloadResult({ toolName: 't', toolCallId: 'w', content: 'y'.repeat(5000) })
      const buffer = native.countLoopTurns()
      await new Promise((resolve) => setTimeout(resolve, 5))
      parentPort.postMessage({ offloaded: result !== null, counting: buffer !== null, turns: buffer ? new Int32Array(buffer)[0] : 0 })
      if (process.env.CO_BUSY === '1') setInterval(() => {}, 1)`
    for (let i = 0; i < 4; i++) {
      const worker = new Worker(body, { eval: true })
      const message = await new Promise<any>((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
      expect(message.offloaded).toBe(true)
      expect(message.counting).toBe(countable)
      if (countable) expect(message.turns).toBeGreaterThan(0)
      expect(await new Promise((resolve) => worker.once('exit', resolve))).toBe(0)
    }
    const busy = new Worker(body, { eval: true, env: { ...process.env, CO_BUSY: '1' } })
    await new Promise((resolve, reject) => {
      busy.once('message', resolve)
      busy.once('error', reject)
    })
    expect(await busy.terminate()).toBe(1)
  })

  it('a process whose loop has only the counter left exits, with nothing on stderr', () => {
    const script = `
      const ours = await import(${JSON.stringify(indexUrl)})
      const offloader = new ours.Offloader({ maxResultTokens: 100, previewTokens: 10 })
      await offloader.offloadResult({ toolName: 't', toolCallId: 'p', content: 'z'.repeat(5000) })
      process.stdout.write('done')`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000, cwd: fileURLToPath(new URL('..', import.meta.url)) })
    expect(run.status).toBe(0)
    expect(run.stdout).toBe('done')
    expect(run.stderr).toBe('')
  })
})
