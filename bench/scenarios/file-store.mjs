/**
 * Scenario 2: many small sequential `store` calls made directly on a FileStorage
 * (fresh directory per run), as an agent offloading many results over a long
 * session would. Reports the total time and the per-store time of the first and
 * the last 1,000 stores; their ratio ("flatness") shows whether a store gets
 * slower as the directory fills (1.0 = flat).
 *
 * The SDK's FileStorage rewrites its whole metadata file on every store, so its
 * run takes tens of seconds at 10,000 stores: it runs once, ours several times.
 */
import { smallPayload } from '../lib/data.mjs'
import { collectGarbage, freshDir, quantile, settleDisk, summarize } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 'file-store'
export const title = 'FileStorage: sequential small stores'

const WINDOW = 1_000
/** How long the disk is left to settle before each side's measured runs. */
const SETTLE_MS = 30_000
/** Last-window / first-window median per-store time above which a run is not "flat". */
const MAX_FLATNESS = 1.5

/** One run of `count` stores into a fresh directory; returns per-store times in ms. */
async function storeMany(impl, count, payload) {
  const storage = new impl.FileStorage(await freshDir(`stores-${impl.side}`))
  const perStore = new Float64Array(count)
  await collectGarbage()
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await storage.store(`tooluse_${i}_0`, payload, 'text/plain')
    perStore[i] = performance.now() - start
  }
  return perStore
}

function analyse(perStore) {
  const values = Array.from(perStore)
  const first = values.slice(0, WINDOW)
  const last = values.slice(-WINDOW)
  const firstMedian = quantile(first, 0.5)
  const lastMedian = quantile(last, 0.5)
  return {
    total: values.reduce((a, b) => a + b, 0),
    firstMedian,
    lastMedian,
    firstMean: first.reduce((a, b) => a + b, 0) / first.length,
    lastMean: last.reduce((a, b) => a + b, 0) / last.length,
    flatness: lastMedian / firstMedian,
  }
}

/** Summaries per metric over several runs of one side. */
function summarizeRuns(runs) {
  const metric = (key) => summarize(runs.map((r) => r[key]))
  return {
    total: metric('total'),
    firstMedian: metric('firstMedian'),
    lastMedian: metric('lastMedian'),
    flatness: metric('flatness'),
  }
}

export async function run({ impls, quick, log }) {
  const count = quick ? 2_000 : 10_000
  const sdkRuns = 1
  const ourRuns = quick ? 3 : 5
  const payload = smallPayload(200)
  const runs = { sdk: [], ours: [] }

  // Each side's measured runs start on a settled disk (see `settleDisk`): the SDK's
  // after the deletes of the scenarios before, ours after the SDK's run.
  const settleMs = quick ? 0 : SETTLE_MS
  if (impls.ours) await storeMany(impls.ours, Math.min(count, 1_000), payload) // warm-up
  await storeMany(impls.sdk, Math.min(count, 200), payload) // warm-up (short: the SDK is slow here)
  log(`  letting the disk settle (${settleMs / 1000} s)…`)
  await settleDisk(settleMs)
  for (let i = 0; i < sdkRuns; i++) {
    log(`  SDK: ${count.toLocaleString()} stores…`)
    runs.sdk.push(analyse(await storeMany(impls.sdk, count, payload)))
  }
  if (impls.ours) {
    log(`  letting the disk settle (${settleMs / 1000} s)…`)
    await settleDisk(settleMs)
    for (let i = 0; i < ourRuns; i++) runs.ours.push(analyse(await storeMany(impls.ours, count, payload)))
  }

  const sdk = summarizeRuns(runs.sdk)
  const ours = impls.ours ? summarizeRuns(runs.ours) : null
  const pick = (key) => ({ sdk: sdk[key], ours: ours?.[key] })
  const n = count.toLocaleString()
  const rows = [
    row(id, `${n} stores, total`, 'ms', pick('total')),
    row(id, `per store, first ${WINDOW.toLocaleString()} (median)`, 'ms', pick('firstMedian')),
    row(id, `per store, last ${WINDOW.toLocaleString()} (median)`, 'ms', pick('lastMedian')),
    row(id, 'flatness: last / first per-store', 'x', pick('flatness'), { ratio: null }),
  ]
  const total = rows[0]
  const flatness = ours?.flatness.median
  const bars = [
    bar(id, `${n} stores at least 50x faster`, total.ratio == null ? null : total.ratio >= 50, `SDK/ours ${times(total.ratio)} (SDK ${ms(total.sdk.median)}, ours ${ms(total.ours?.median)})`),
    bar(
      id,
      `per-store time flat (last/first ${WINDOW.toLocaleString()} median <= ${MAX_FLATNESS})`,
      flatness == null ? null : flatness <= MAX_FLATNESS,
      `ours ${flatness == null ? 'n/a' : flatness.toFixed(2)}, SDK ${sdk.flatness.median.toFixed(2)}`,
    ),
  ]
  return { rows, bars, details: { count, runs } }
}
