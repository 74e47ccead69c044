/**
 * Scenario 6: memory held after offloading 500 MB (50 results of 10 MB) into an
 * InMemoryStorage. Each side runs in its own fresh child process
 * (`node --expose-gc`, see memory-child.mjs) so neither inherits the other's heap;
 * figures are after full garbage collections, in MB. Growth is relative to the
 * same process just before the offloads.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { summarize } from '../lib/measure.mjs'
import { bar, row } from '../lib/results.mjs'

export const id = 'memory'
export const title = 'Memory after offloading 500 MB to InMemoryStorage'

const run$ = promisify(execFile)
const CHILD = fileURLToPath(new URL('./memory-child.mjs', import.meta.url))
const COUNT = 50
const BYTES = 10_000_000
const OURS_HEAP_LIMIT_MB = 10

const mb = (value) => (value == null ? 'n/a' : `${value.toFixed(1)} MB`)

async function measure(side, count) {
  const { stdout } = await run$(process.execPath, ['--expose-gc', CHILD, side, String(count), String(BYTES)], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
    maxBuffer: 1 << 20,
  })
  return JSON.parse(stdout.trim().split('\n').at(-1))
}

export async function run({ impls, quick }) {
  const reps = quick ? 1 : 3
  const count = quick ? 20 : COUNT
  const sides = ['sdk', ...(impls.ours ? ['ours'] : [])]
  const runs = { sdk: [], ours: [] }
  for (let i = 0; i < reps; i++) for (const side of sides) runs[side].push(await measure(side, count))
  const metric = (pick) => ({
    sdk: summarize(runs.sdk.map(pick)),
    ours: impls.ours ? summarize(runs.ours.map(pick)) : null,
  })
  const label = `${count} x 10 MB`
  const rows = [
    row(id, `${label}: V8 heap used growth`, 'MB', metric((r) => r.heapUsedGrowth)),
    row(id, `${label}: external (after)`, 'MB', metric((r) => r.after.external)),
    row(id, `${label}: RSS (after)`, 'MB', metric((r) => r.after.rss)),
    row(id, `${label}: RSS growth`, 'MB', metric((r) => r.rssGrowth)),
  ]
  const [heap, , rss] = rows
  const bars = [
    bar(
      id,
      'our RSS after GC no higher than the SDK\'s',
      rss.ours == null ? null : rss.ours.median <= rss.sdk.median,
      `ours ${mb(rss.ours?.median)}, SDK ${mb(rss.sdk.median)}`,
    ),
    bar(
      id,
      `our V8 heap growth under ${OURS_HEAP_LIMIT_MB} MB`,
      heap.ours == null ? null : heap.ours.median < OURS_HEAP_LIMIT_MB,
      `ours ${mb(heap.ours?.median)}, SDK ${mb(heap.sdk.median)}`,
    ),
  ]
  return { rows, bars, details: { count, bytes: BYTES, runs } }
}
