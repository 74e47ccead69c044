/**
 * Scenario 3: a regex search with context over a large offloaded result, through
 * each plugin's retrieval tool called as the agent calls it. The 20 MB,
 * 200,000-line log is offloaded once per side into that plugin's InMemoryStorage
 * (not timed); each timed run is one tool call. Both sides must return the same
 * text, or the comparison is void.
 */
import { callTool, createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { logBuffer, textOf } from '../lib/data.mjs'
import { compare } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'search'
export const title = 'Retrieval tool: pattern search'

const LINES = 200_000
const QUERIES = [
  { label: "'ERROR.*timeout', context 2", input: { pattern: 'ERROR.*timeout', context_lines: 2 }, bar: 4 },
  { label: "'worker-7', context 0", input: { pattern: 'worker-7', context_lines: 0 } },
  { label: 'line_range 100000-100200', input: { line_range: { start: 100_000, end: 100_200 } } },
]

/** Offloads the log through a fresh plugin; returns what a tool call needs. */
async function prepare(impl, buffer) {
  const { agent, plugin } = createPluginAgent(impl, new impl.InMemoryStorage())
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
  return { rows, bars, details }
}
