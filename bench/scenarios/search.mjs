/**
 * Scenario 3: a regex search with context over a large offloaded result, through
 * each plugin's retrieval tool called as the agent calls it. The 20 MB,
 * 200,000-line log is offloaded once per side into that plugin's InMemoryStorage
 * (not timed); each timed run is one tool call. Both sides must return the same
 * text, or the comparison is void.
 *
 * Then ours alone: an agent greps one 20 MB reference with 10 different patterns in
 * a row, with the search cache (decoded text and line index kept between greps)
 * against the same code with the cache's budget set to 0, in the same process. Each
 * cached run starts from an empty cache, so its first grep prepares the text.
 */
import { callTool, createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { logBuffer, textOf } from '../lib/data.mjs'
import { compare, freshDir, removeDir } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 'search'
export const title = 'Retrieval tool: pattern search'

const LINES = 200_000
const QUERIES = [
  { label: "'ERROR.*timeout', context 2", input: { pattern: 'ERROR.*timeout', context_lines: 2 }, bar: 4 },
  { label: "'worker-7', context 0", input: { pattern: 'worker-7', context_lines: 0 } },
  { label: 'line_range 100000-100200', input: { line_range: { start: 100_000, end: 100_200 } } },
]

/** Ten greps an agent makes on one log: words, regexes, alternations, line ranges, context 0 to 5. */
const AGENT_GREPS = [
  { pattern: 'ERROR', context_lines: 0 },
  { pattern: 'ERROR.*timeout', context_lines: 2 },
  { pattern: 'timeout|refused', context_lines: 1 },
  { pattern: 'payments-service', context_lines: 3 },
  { pattern: 'status=(4|5)\\d\\d' },
  { pattern: 'worker-7 .*(retrying|refused)', context_lines: 0 },
  { pattern: 'duration_ms=24\\d', context_lines: 4 },
  { line_range: { start: 100_000, end: 100_200 } },
  { pattern: 'WARN', line_range: { start: 150_000, end: 160_000 }, context_lines: 1 },
  { pattern: 'id=zz', context_lines: 5 },
]

/** The search cache's default budget (restored after the cached/uncached comparison). */
const CACHE_BUDGET = 64 * 1024 * 1024

/** Offloads the log through a fresh plugin; returns what a tool call needs. */
async function prepare(impl, buffer, storage = new impl.InMemoryStorage()) {
  const { agent, plugin } = createPluginAgent(impl, storage)
  const [reference] = referencesIn(await offload(agent, textOf(buffer)))
  return { agent, tool: plugin.getTools()[0], reference }
}

function spec(prepared, input, outputs) {
  if (!prepared) return undefined
  return {
    run: async () => {
      const output = await callTool(prepared.tool, { reference: prepared.reference, ...input }, prepared.agent)
      outputs.push(output)
    },
  }
}

export async function run({ impls, quick }) {
  const plan = quick ? { warmup: 1, reps: 3 } : { warmup: 3, reps: 15 }
  const buffer = logBuffer(LINES, 99)
  const prepared = { sdk: await prepare(impls.sdk, buffer), ours: impls.ours && (await prepare(impls.ours, buffer)) }
  const rows = []
  const bars = []
  const details = { bytes: buffer.length, lines: LINES, queries: [] }
  for (const query of QUERIES) {
    const outputs = { sdk: [], ours: [] }
    const results = await compare(
      { sdk: spec(prepared.sdk, query.input, outputs.sdk), ours: spec(prepared.ours, query.input, outputs.ours) },
      plan,
    )
    const sameOutput = prepared.ours ? outputs.sdk[0] === outputs.ours[0] : null
    const r = row(id, `20 MB / 200k lines: ${query.label}`, 'ms', results, { sameOutput })
    rows.push(r)
    details.queries.push({
      label: query.label,
      input: query.input,
      sameOutput,
      header: { sdk: outputs.sdk[0]?.split('\n')[0], ours: outputs.ours[0]?.split('\n')[0] },
    })
    if (query.bar) {
      bars.push(
        bar(
          id,
          `${query.label} at least ${query.bar}x faster, same output`,
          r.ratio == null ? null : r.ratio >= query.bar && sameOutput,
          `SDK/ours ${times(r.ratio)}, output ${sameOutput == null ? 'n/a' : sameOutput ? 'identical' : 'DIFFERS'}`,
        ),
      )
    }
  }
  if (prepared.ours) {
    const native = (await import('../../lib/native.js')).native
    try {
      // Files save the read as well as the decoding and the line index: the 2x bar. In
      // memory only the decoding and the index are saved, and the regex scans stay.
      const memory = await cachedVsUncached('InMemoryStorage', prepared.ours, native, quick, 1.5)
      const dir = await freshDir('search-cache')
      try {
        const onFile = await prepare(impls.ours, buffer, new impls.ours.FileStorage(dir))
        const file = await cachedVsUncached('FileStorage', onFile, native, quick, 2)
        for (const r of [memory, file]) {
          rows.push(r.row)
          bars.push(r.bar)
          details.queries.push(r.detail)
        }
      } finally {
        await removeDir(dir)
      }
    } finally {
      native.setSearchCacheBytes(CACHE_BUDGET)
    }
  }
  return { rows, bars, details }
}

/**
 * The 10 greps of {@link AGENT_GREPS} on one reference, timed as one run: with the
 * search cache (emptied before each run) in the `ours` column, with its budget at 0 in
 * the `sdk` column. Both must answer the same.
 */
async function cachedVsUncached(label, prepared, native, quick, needed) {
  const outputs = { uncached: [], cached: [] }
  const greps = (into) => async () => {
    const answers = []
    for (const input of AGENT_GREPS) answers.push(await callTool(prepared.tool, { reference: prepared.reference, ...input }, prepared.agent))
    if (into.length === 0) into.push(answers)
  }
  const results = await compare(
    {
      sdk: { setup: () => native.setSearchCacheBytes(0), run: greps(outputs.uncached) },
      ours: {
        setup: () => {
          native.setSearchCacheBytes(0)
          native.setSearchCacheBytes(CACHE_BUDGET)
        },
        run: greps(outputs.cached),
      },
    },
    quick ? { warmup: 1, reps: 3 } : { warmup: 2, reps: 15 },
  )
  const sameOutput = JSON.stringify(outputs.uncached[0]) === JSON.stringify(outputs.cached[0])
  const caseLabel = `20 MB / 200k lines, ${label}: 10 different greps, uncached (SDK column) vs cached`
  const r = row(id, caseLabel, 'ms', results, { sameOutput, note: `both columns ours, ${sameOutput ? 'same output' : 'OUTPUT DIFFERS'}` })
  return {
    row: r,
    bar: bar(
      id,
      `10 greps on one 20 MB reference (${label}) at least ${needed}x faster with the search cache, same output`,
      r.ratio != null && r.ratio >= needed && sameOutput,
      `uncached/cached ${times(r.ratio)} (uncached ${ms(results.sdk.median)}, cached ${ms(results.ours.median)}), output ${sameOutput ? 'identical' : 'DIFFERS'}`,
    ),
    detail: { label: `${label}: 10 greps cached vs uncached`, input: AGENT_GREPS, sameOutput, header: null },
  }
}
