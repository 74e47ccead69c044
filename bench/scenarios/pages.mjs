/**
 * Scenario: reading every page of a long answer with `retrieval: 'extended'`. A grep
 * that matches every line of a 200 MB text (20 MB with `--quick`) answers with about
 * as many bytes again, 20,000 pages of the default budget. Both columns are ours: one
 * search (the first page, which builds the answer) and every page one after another
 * through the retrieval tool, as an agent pages (the first page builds the answer; the
 * others are cut from it). The answer cache is emptied before each run.
 */
import { callTool, createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { compare } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'pages'
export const title = 'Extended retrieval: every page of a 200 MB answer vs one search'

const FOOTER = /\n\[Page (\d+) of this answer(?:\. More follows: call again with the same arguments and page: (\d+)|, the last\.)\]$/
const MAX_RATIO = 2

/** A log of about `bytes` bytes: every line has the word `request`. */
function log(bytes) {
  const line = (i) => `2026-11-24T10:00:00Z INFO worker-${i % 16} handled request ${i} in ${i % 97} ms ${'x'.repeat(40)}\n`
  const chunk = Array.from({ length: 10_000 }, (_, i) => line(i)).join('')
  return chunk.repeat(Math.ceil(bytes / chunk.length))
}

export async function run({ impls, quick }) {
  const plan = quick ? { warmup: 1, reps: 3 } : { warmup: 1, reps: 5 }
  if (!impls.ours) return { rows: [], bars: [bar(id, `every page within ${MAX_RATIO}x one search`, null, 'ours not loaded')], details: {} }
  const native = (await import('../../lib/native.js')).native
  const bytes = quick ? 20_000_000 : 200_000_000
  const storage = new impls.ours.InMemoryStorage()
  const { agent, plugin } = createPluginAgent(impls.ours, storage, { retrieval: 'extended' })
  const [reference] = referencesIn(await offload(agent, log(bytes)))
  const tool = plugin.getTools()[0]
  const input = { reference, pattern: 'request', context_lines: 0 }
  const fresh = () => {
    native.setAnswerCacheBytes(0)
    native.setAnswerCacheBytes(1024 * 1024 * 1024)
  }
  let pages = 0
  const results = await compare(
    {
      sdk: {
        run: async () => {
          fresh()
          const first = await callTool(tool, input, agent)
          if (!FOOTER.test(first)) throw new Error('the answer is one page')
        },
      },
      ours: {
        run: async () => {
          fresh()
          let count = 0
          let page = await callTool(tool, input, agent)
          for (;;) {
            count += 1
            const next = FOOTER.exec(page)?.[2]
            if (!next) break
            page = await callTool(tool, { ...input, page: Number(next) }, agent)
          }
          pages = count
        },
      },
    },
    plan,
  )
  native.setAnswerCacheBytes(512 * 1024 * 1024)
  const r = row(id, `grep of every line of ${bytes / 1e6} MB: one search (first page) vs all ${pages.toLocaleString('en-US')} pages`, 'ms', results)
  const ratio = results.ours.median / results.sdk.median
  r.note = `both ours; all pages / one search ${times(ratio)}`
  return {
    rows: [r],
    bars: [bar(id, `every page of the answer within ${MAX_RATIO}x one search (medians)`, ratio <= MAX_RATIO, `${times(ratio)}: one search ${results.sdk.median.toFixed(0)} ms, ${pages} pages ${results.ours.median.toFixed(0)} ms`)],
    details: { bytes, pages },
  }
}
