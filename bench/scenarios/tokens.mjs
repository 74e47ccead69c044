/**
 * Scenario: exact token counting (o200k_base) of a 10 MB generated tool result
 * (logs, prose, code, JSON lines, some CJK). Ours is `countTokens` of this
 * package's token API, through the native binding: asynchronous, string
 * hand-over included. It is compared with `js-tiktoken` (`encode(text).length`,
 * pure JavaScript) and `tiktoken` (`encode_ordinary(text).length`, OpenAI's Rust
 * core compiled to WebAssembly); the three counts must be equal. Vocabularies are
 * loaded before timing. In the table the "SDK" columns hold the other library.
 *
 * Then, for single-kind corpora of about 200,000 characters, the SDK's default
 * estimate (characters / 4) against the exact o200k_base count: the SDK column
 * holds the estimate, ours the exact count, SDK/ours their ratio.
 */
import { Tiktoken } from 'js-tiktoken/lite'
import o200k from 'js-tiktoken/ranks/o200k_base'
import { get_encoding } from 'tiktoken'
import { corpora, fresh, mixedText } from '../lib/corpus.mjs'
import { compare } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'tokens'
export const title = 'Token counting: native BPE vs js-tiktoken and tiktoken (WASM)'

const ENCODING = 'o200k_base'
const MIXED_UNITS = 10_000_000
const CORPUS_UNITS = 200_000
const BARS = { jsTiktoken: 3, wasm: 1.5 }

/** This package's token API over the built addon, or `{ error }`. */
async function loadTokenApi() {
  try {
    const native = await import('../../binding.cjs')
    const { createTokenApi } = await import('../../lib/tokens.js')
    await native.loadEncoding(ENCODING)
    return createTokenApi(native)
  } catch (error) {
    return { error: error?.message ?? String(error) }
  }
}

/** A timed spec counting a fresh copy of `buffer` with `count`; counts go to `seen`. */
function spec(buffer, count, seen) {
  return {
    setup: () => fresh(buffer),
    run: async (text) => {
      seen.push(await count(text))
    },
  }
}

const megabytesPerSecond = (bytes, summary) => (summary ? bytes / 1e6 / (summary.median / 1000) : null)
const rate = (value) => (value == null ? 'n/a' : `${value.toFixed(1)} MB/s`)

function throughputRows(buffer, results, counts, log) {
  const bytes = buffer.length
  const sameCount =
    counts.ours.length > 0 && [...counts.ours, ...counts.jsTiktoken, ...counts.wasm].every((n) => n === counts.ours[0])
  const rows = []
  const bars = []
  for (const [side, label] of [
    ['jsTiktoken', 'js-tiktoken encode().length'],
    ['wasm', 'tiktoken (WASM) encode_ordinary().length'],
  ]) {
    const r = row(id, `10 MB mixed text, ${ENCODING}: ${label} vs ours countTokens`, 'ms', {
      sdk: results[side],
      ours: results.ours,
    })
    r.note = `${rate(megabytesPerSecond(bytes, results[side]))} vs ${rate(megabytesPerSecond(bytes, results.ours))}${
      results.ours ? (sameCount ? ', same count' : ', COUNTS DIFFER') : ''
    }`
    rows.push(r)
    const needed = BARS[side]
    bars.push(
      bar(
        id,
        `countTokens on 10 MB at least ${needed}x faster than ${label.split(' ')[0]}${side === 'wasm' ? ' (WASM)' : ''}, same count`,
        r.ratio == null ? null : r.ratio >= needed && sameCount,
        `${label.split(' ')[0]}/ours ${times(r.ratio)}; counts ours ${counts.ours[0] ?? 'n/a'}, js-tiktoken ${counts.jsTiktoken[0]}, WASM ${counts.wasm[0]}`,
      ),
    )
  }
  log(`  ${bytes} bytes; counts: ours ${counts.ours[0] ?? 'n/a'}, js-tiktoken ${counts.jsTiktoken[0]}, WASM ${counts.wasm[0]}`)
  return { rows, bars, sameCount }
}

/** Rows comparing chars/4 with exact counts; the exact count comes from `exact`. */
function heuristicRows(exact, log) {
  const rows = []
  const table = []
  for (const [label, buffer] of Object.entries(corpora(CORPUS_UNITS))) {
    const text = fresh(buffer)
    const tokens = exact(text)
    const estimate = Math.ceil(text.length / 4)
    const error = (estimate - tokens) / tokens
    const entry = { corpus: label, chars: text.length, exactTokens: tokens, charsOver4: estimate, errorPercent: error * 100 }
    table.push(entry)
    const point = (value) => ({ median: value, p90: value, min: value, max: value, n: 1, samples: [value] })
    rows.push(
      row(id, `chars/4 vs exact ${ENCODING}: ${label} (${text.length.toLocaleString('en-US')} chars)`, 'tokens', {
        sdk: point(estimate),
        ours: point(tokens),
      }, { note: `error ${error >= 0 ? '+' : ''}${(error * 100).toFixed(1)}%` }),
    )
  }
  log('  corpus          chars  exact tokens  chars/4  error')
  for (const e of table) {
    log(
      `  ${e.corpus.padEnd(14)} ${String(e.chars).padStart(7)}  ${String(e.exactTokens).padStart(12)}  ${String(e.charsOver4).padStart(7)}  ${`${e.errorPercent >= 0 ? '+' : ''}${e.errorPercent.toFixed(1)}%`.padStart(6)}`,
    )
  }
  return { rows, table }
}

export async function run({ quick, log }) {
  const plan = quick ? { warmup: 1, reps: 2 } : { warmup: 1, reps: 5 }
  const api = await loadTokenApi()
  if (api.error) log(`  native token counting unavailable: ${api.error}`)
  const js = new Tiktoken(o200k)
  const wasm = get_encoding(ENCODING)
  try {
    const buffer = mixedText(MIXED_UNITS)
    const counts = { ours: [], jsTiktoken: [], wasm: [] }
    const results = await compare(
      {
        jsTiktoken: spec(buffer, (text) => js.encode(text).length, counts.jsTiktoken),
        wasm: spec(buffer, (text) => wasm.encode_ordinary(text).length, counts.wasm),
        ours: api.error ? undefined : spec(buffer, (text) => api.countTokens(text, ENCODING), counts.ours),
      },
      plan,
    )
    const throughput = throughputRows(buffer, results, counts, log)
    const exact = api.error ? (text) => wasm.encode_ordinary(text).length : (text) => api.countTokensSync(text, ENCODING)
    const heuristic = heuristicRows(exact, log)
    return {
      rows: [...throughput.rows, ...heuristic.rows],
      bars: throughput.bars,
      details: {
        bytes: buffer.length,
        counts,
        sameCount: throughput.sameCount,
        megabytesPerSecond: Object.fromEntries(
          Object.entries(results).map(([side, summary]) => [side, megabytesPerSecond(buffer.length, summary)]),
        ),
        heuristic: heuristic.table,
      },
    }
  } finally {
    wasm.free()
  }
}
