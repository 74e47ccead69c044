// Runs of inline native work (lib/native.js mustYield / yieldToEventLoop) are fair and
// bounded: a chain that yields makes progress when it resumes, however long another
// agent's chain is; work resumed by I/O and the immediates after it hold the loop for
// one run before timers fire; and no single inline encode stalls the loop past a run.
import { createServer, connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { AfterToolCallEvent, TextBlock, ToolResultBlock } from '@strands-agents/sdk'
import { ContextOffloader, InMemoryStorage } from '../index.js'
import { Offloader } from '../core.js'

const countable = process.platform !== 'win32'

describe('runs of inline work', () => {
  it.runIf(countable)('a chain that starts while another agent runs a long chain of inline offloads still makes progress', async () => {
    // The chain whose immediate comes first in a turn could take the whole run each
    // turn; a later chain finding it used up would yield again, behind it, turn after
    // turn, until the first is done. Each resumed chain does one piece of work first.
    const a = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const b = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const text = 'line of a log\n'.repeat(900)
    let bFinished = false
    let aDone = 0
    const started = performance.now()
    const chainA = (async () => {
      while (!bFinished && performance.now() - started < 3_000) {
        await a.offloadResult({ toolName: 't', toolCallId: `a-${aDone}`, content: text })
        aDone += 1
      }
    })()
    const bTook = await new Promise<number>((resolve) =>
      setTimeout(async () => {
        const t0 = performance.now()
        for (let i = 0; i < 20; i++) await b.offloadResult({ toolName: 't', toolCallId: `b-${i}`, content: text })
        bFinished = true
        resolve(performance.now() - t0)
      }, 20),
    )
    await chainA
    // 20 small offloads take well under 2 ms of work; a fair share gets them done in a few turns.
    expect(bTook).toBeLessThan(500)
  }, 30_000)

  it.runIf(countable)('a chain resumed from I/O holds the loop for one run before timers fire, not two', async () => {
    // A chain resumed by I/O (a model's response, a socket) works for one run in the poll
    // phase and yields; its immediate runs in the same loop iteration, with no timers
    // phase in between: it must not start a fresh run there (turns are counted before
    // the poll phase, so the I/O and the immediates after it are one run).
    const storage = new InMemoryStorage(null)
    const bytes = new TextEncoder().encode('x'.repeat(2000))
    const server = createServer((s) => {
      const t = setInterval(() => s.write('x'), 7)
      s.on('close', () => clearInterval(t))
      s.on('error', () => {})
    })
    await new Promise<void>((r) => server.listen(0, r))
    const sock = connect((server.address() as any).port)
    const ticks: number[] = []
    const iv = setInterval(() => ticks.push(performance.now()), 1)
    const busy: number[] = []
    let i = 0
    try {
      for (let burst = 0; burst < 30; burst++) {
        await new Promise((r) => sock.once('data', r))
        const before = ticks.length
        const resumed = performance.now()
        while (ticks.length === before) await storage.store(`k${i++}`, bytes)
        busy.push(ticks[ticks.length - 1] - resumed)
      }
    } finally {
      clearInterval(iv)
      sock.destroy()
      server.close()
    }
    busy.sort((x, y) => x - y)
    // One run is 2 ms (about 2.1 ms here); two runs in a row took a median of 4 to 5 ms.
    expect(busy[15]).toBeLessThan(3.3)
  }, 60_000)
})

describe('inline encoding into memory', () => {
  it('an offload of 1M units of CJK into memory does not stall the event loop past a run', async () => {
    const storage = new InMemoryStorage(null)
    const plugin = new ContextOffloader({ storage, maxResultTokens: 10, previewTokens: 1 })
    const hooks = new Map<unknown, (event: unknown) => unknown>()
    const agent = { addHook: (e: unknown, cb: (e: unknown) => unknown) => hooks.set(e, cb), metrics: { cycleCount: 0 }, model: { countTokens: async () => 1_000_000 } }
    plugin.initAgent(agent as never)
    let n = 0
    const offload = async (text: string) => {
      const id = `id${n++}`
      const event = new AfterToolCallEvent({
        agent: agent as never,
        toolUse: { name: 'big', toolUseId: id, input: {} },
        tool: undefined,
        result: new ToolResultBlock({ toolUseId: id, status: 'success', content: [new TextBlock(text)] }),
        invocationState: {},
      } as never)
      await hooks.get(AfterToolCallEvent)!(event)
    }
    const gapDuring = async (text: string) => {
      const gaps: number[] = []
      for (let r = 0; r < 5; r++) {
        let last = performance.now()
        let worst = 0
        const iv = setInterval(() => {
          const t = performance.now()
          worst = Math.max(worst, t - last)
          last = t
        }, 1)
        await new Promise((res) => setTimeout(res, 3))
        last = performance.now()
        worst = 0
        await offload(text)
        await new Promise((res) => setTimeout(res, 3))
        clearInterval(iv)
        gaps.push(worst)
      }
      return Math.min(...gaps)
    }
    const N = 1 << 20
    // CJK text takes milliseconds to encode, whatever its length up to 1M units: a worker
    // thread encodes it (encoded inline, 1M units held the loop about 5 ms).
    const worker = await gapDuring('日'.repeat(N + 1))
    const inline = await gapDuring('日'.repeat(N))
    expect({ worker: worker < 3, inline: inline < 3 }).toEqual({ worker: true, inline: true })
  }, 60_000)
})
