/**
 * Scenario 1: offloading one large text tool result through the plugin's
 * AfterToolCallEvent hook, into an InMemoryStorage and into a FileStorage (a fresh
 * directory per run; the SDK plugin writes through the agent's sandbox).
 * Mixed-script results of 1 and 10 MB go to memory too.
 * Timed: the hook dispatch (token count, storing, building the placeholder).
 */
import { createPluginAgent, offload } from '../lib/agent.mjs'
import { logOfSize, mixedLogOfSize, textOf } from '../lib/data.mjs'
import { compare, freshDir, removeDir } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'offload'
export const title = 'Offload one text result'

const SIZES = [
  { label: '0.1 MB', bytes: 100_000 },
  { label: '1 MB', bytes: 1_000_000 },
  { label: '10 MB', bytes: 10_000_000 },
]

/** Mixed-script results (characters beyond Latin-1 on every line), to memory only. */
const MIXED_SIZES = [
  { label: '1 MB mixed', bytes: 1_000_000 },
  { label: '10 MB mixed', bytes: 10_000_000 },
]

/** Every offload to memory at least this much faster than the SDK's (medians). */
const MEMORY_RATIO = 1.2

function memorySpec(impl, buffer) {
  return {
    setup: () => ({ ...createPluginAgent(impl, new impl.InMemoryStorage()), text: textOf(buffer) }),
    run: (state) => offload(state.agent, state.text),
  }
}

function fileSpec(impl, buffer) {
  return {
    setup: async () => {
      const dir = await freshDir(`offload-${impl.side}`)
      return { ...createPluginAgent(impl, new impl.FileStorage(dir)), dir, text: textOf(buffer) }
    },
    run: (state) => offload(state.agent, state.text),
    teardown: (state) => removeDir(state.dir),
  }
}

export async function run({ impls, quick }) {
  const plan = quick ? { warmup: 1, reps: 3 } : { warmup: 3, reps: 15 }
  const rows = []
  const bars = []
  const byKey = {}
  for (const { label, bytes } of SIZES) {
    const buffer = logOfSize(bytes)
    for (const [target, spec] of [
      ['memory', memorySpec],
      ['files', fileSpec],
    ]) {
      const results = await compare(
        { sdk: spec(impls.sdk, buffer), ours: impls.ours && spec(impls.ours, buffer) },
        plan,
      )
      const r = row(id, `${label} to ${target}`, 'ms', results)
      rows.push(r)
      byKey[`${label} ${target}`] = r
    }
  }
  for (const { label, bytes } of MIXED_SIZES) {
    const buffer = mixedLogOfSize(bytes)
    const results = await compare(
      { sdk: memorySpec(impls.sdk, buffer), ours: impls.ours && memorySpec(impls.ours, buffer) },
      plan,
    )
    const r = row(id, `${label} to memory`, 'ms', results)
    rows.push(r)
    byKey[`${label} memory`] = r
  }
  const files10 = byKey['10 MB files']
  const judge = (r, min) => (r.ratio == null ? null : r.ratio >= min)
  bars.push(bar(id, '10 MB to files at least 3x faster', judge(files10, 3), `SDK/ours ${times(files10.ratio)}`))
  const memory = Object.entries(byKey).filter(([key]) => key.endsWith(' memory')).map(([, r]) => r)
  const atLeast = (rs) => (rs.some((r) => r.ratio == null) ? null : rs.every((r) => r.ratio >= MEMORY_RATIO))
  const ratios = (rs) => rs.map((r) => `${r.case.replace(' to memory', '')} ${times(r.ratio)}`).join(', ')
  bars.push(bar(id, `every offload to memory at least ${MEMORY_RATIO}x faster (medians)`, atLeast(memory), ratios(memory)))
  return { rows, bars }
}
