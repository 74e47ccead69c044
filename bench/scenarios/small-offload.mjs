/**
 * Small offloads, the most common ones: 10 KB and 100 KB text results, ASCII and
 * mixed-script (characters beyond Latin-1 on every line, as real tool output has),
 * into an InMemoryStorage and into a FileStorage. Default options on both sides but a
 * threshold of 1,000 tokens and a preview of 250 (so that 10 KB is offloaded).
 * Timed: the hook dispatch (token count, storing, building the placeholder).
 *
 * An offload takes tens of microseconds here, less than what a forced full garbage
 * collection costs the sample that follows it (the first allocations and native calls
 * after a mark-compact are several times slower, 10-50 µs each). So the garbage of the
 * previous sample is collected with a young-generation collection (scavenge) instead,
 * and each sample is a batch of 20 offloads, each with a fresh plugin, agent and
 * storage; the figure is the batch's time divided by 20.
 */
import { createPluginAgent, offload } from '../lib/agent.mjs'
import { logOfSize, mixedLogOfSize, textOf } from '../lib/data.mjs'
import { compare, freshDir, removeDir } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'small-offload'
export const title = 'Offload a small text result (10 KB, 100 KB; ASCII and mixed-script)'

const CASES = [
  { label: '10 KB ASCII', buffer: () => logOfSize(10_000) },
  { label: '10 KB mixed', buffer: () => mixedLogOfSize(10_000) },
  { label: '100 KB ASCII', buffer: () => logOfSize(100_000) },
  { label: '100 KB mixed', buffer: () => mixedLogOfSize(100_000) },
]

/** Offloads to memory at least this much faster than the SDK's (medians). */
const MEMORY_RATIO = 1.2

/** Offloads per timed sample. */
const BATCH = 20

function spec(target) {
  return (impl, buffer) => ({
    setup: async () => {
      const dir = target === 'files' ? await freshDir(`small-${impl.side}`) : undefined
      const items = Array.from({ length: BATCH }, () => {
        const storage = dir ? new impl.FileStorage(dir) : new impl.InMemoryStorage()
        // Options are the defaults but for the threshold (10 KB is 2,500 tokens at 4 characters each).
        return { ...createPluginAgent(impl, storage, { maxResultTokens: 1000, previewTokens: 250 }), text: textOf(buffer) }
      })
      // The directory exists and is open before timing, as in an agent that offloaded before.
      if (dir) await items[0].storage.store('warm', new Uint8Array(1), 'text/plain')
      return { dir, items }
    },
    run: async (state) => {
      const started = performance.now()
      for (const item of state.items) await offload(item.agent, item.text)
      return { value: (performance.now() - started) / BATCH }
    },
    teardown: (state) => (state.dir ? removeDir(state.dir) : undefined),
  })
}

export async function run({ impls, quick }) {
  // The median of 25 alternating samples per side (500 offloads each).
  const plan = quick ? { warmup: 2, reps: 7, collect: 'minor' } : { warmup: 5, reps: 25, collect: 'minor' }
  const rows = []
  for (const { label, buffer: make } of CASES) {
    const buffer = make()
    for (const target of ['memory', 'files']) {
      const make = spec(target)
      const results = await compare({ sdk: make(impls.sdk, buffer), ours: impls.ours && make(impls.ours, buffer) }, plan)
      rows.push(row(id, `${label} to ${target}`, 'ms', results))
    }
  }
  const judge = (rs, min) => (rs.some((r) => r.ratio == null) ? null : rs.every((r) => r.ratio >= min))
  const ratios = (rs) => rs.map((r) => `${r.case} ${times(r.ratio)}`).join(', ')
  const memory = rows.filter((r) => r.case.endsWith('to memory'))
  const files = rows.filter((r) => r.case.endsWith('to files'))
  const bars = [
    bar(id, `every small offload to memory at least ${MEMORY_RATIO}x faster than the SDK (medians)`, judge(memory, MEMORY_RATIO), ratios(memory)),
    bar(id, 'every small offload to files at least as fast as the SDK (medians)', judge(files, 1.0), ratios(files)),
  ]
  return { rows, bars }
}
