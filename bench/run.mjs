#!/usr/bin/env node
/**
 * Benchmarks this package's ContextOffloader against the SDK's, side by side.
 *
 *   npm run bench                      full run (about 10 minutes)
 *   npm run bench -- --quick           shorter run (fewer repetitions, smaller counts)
 *   npm run bench -- --svg docs/bench.svg   also a chart of the ratios (log scale, one bar per case)
 *   npm run bench -- --only=search,memory
 *   npm run bench -- --out=path.json   results file (default bench/results.json)
 *
 * Builds nothing: run `npm run build` first. Prints a table (medians, p90, and
 * SDK/ours on the medians: > 1 means ours is faster or smaller) and one
 * PASS/FAIL line per bar; exits with status 1 if any bar fails or cannot be judged.
 */
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { loadOurs, loadSdk } from './lib/impls.mjs'
import { removeTempDirs } from './lib/measure.mjs'
import { formatBars, formatTable, writeResults } from './lib/report.mjs'
import { ratioChart } from './lib/chart.mjs'
import * as offload from './scenarios/offload.mjs'
import * as smallOffload from './scenarios/small-offload.mjs'
import * as fileStore from './scenarios/file-store.mjs'
import * as search from './scenarios/search.mjs'
import * as backtracking from './scenarios/backtracking.mjs'
import * as eventLoop from './scenarios/event-loop.mjs'
import * as memory from './scenarios/memory.mjs'
import * as sessions from './scenarios/sessions.mjs'
import * as s3 from './scenarios/s3.mjs'
import * as tokens from './scenarios/tokens.mjs'
import * as decision from './scenarios/decision.mjs'
import * as lifecycle from './scenarios/lifecycle.mjs'
import * as query from './scenarios/query.mjs'
import * as references from './scenarios/references.mjs'
import * as cli from './scenarios/cli.mjs'
import * as pages from './scenarios/pages.mjs'
import * as mcp from './scenarios/mcp.mjs'

const SCENARIOS = [offload, smallOffload, fileStore, search, query, pages, references, backtracking, eventLoop, memory, sessions, s3, tokens, decision, lifecycle, cli, mcp]

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string', default: fileURLToPath(new URL('./results.json', import.meta.url)) },
    svg: { type: 'string' },
  },
})

const log = (message) => process.stderr.write(`${message}\n`)
const selected = options.only ? options.only.split(',').map((s) => s.trim()) : SCENARIOS.map((s) => s.id)
const unknown = selected.filter((name) => !SCENARIOS.some((s) => s.id === name))
if (unknown.length > 0) {
  log(`unknown scenario(s): ${unknown.join(', ')}; choose from ${SCENARIOS.map((s) => s.id).join(', ')}`)
  process.exit(2)
}
if (typeof globalThis.gc !== 'function') log('note: run with --expose-gc (as `npm run bench` does) for steadier timings')

const sdk = await loadSdk()
const ours = await loadOurs()
if (ours.error) log(`ours could not be loaded, running the SDK side only: ${ours.error}`)
const impls = { sdk, ours: ours.error ? null : ours }

const started = performance.now()
const results = {
  meta: {
    date: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadAverageAtStart: os.loadavg(),
    sdkVersion: sdk.version,
    oursVersion: ours.version ?? null,
    oursError: ours.error ?? null,
  },
  scenarios: {},
  rows: [],
  bars: [],
}

try {
  for (const scenario of SCENARIOS.filter((s) => selected.includes(s.id))) {
    log(`[${scenario.id}] ${scenario.title}…`)
    const t0 = performance.now()
    const outcome = await scenario.run({ impls, quick: options.quick, log })
    const seconds = (performance.now() - t0) / 1000
    log(`[${scenario.id}] done in ${seconds.toFixed(1)} s`)
    results.scenarios[scenario.id] = { title: scenario.title, seconds, details: outcome.details ?? null }
    results.rows.push(...outcome.rows)
    results.bars.push(...outcome.bars)
  }
} finally {
  await removeTempDirs()
}
results.meta.seconds = (performance.now() - started) / 1000
results.meta.loadAverageAtEnd = os.loadavg()

const heading =
  `context-offloader ${ours.version ?? '(not loaded)'} vs @strands-agents/sdk ${sdk.version} — ` +
  `${results.meta.mode} run, node ${process.version}, ${results.meta.cpus} CPUs, ${results.meta.seconds.toFixed(0)} s, ` +
  `load average ${results.meta.loadAverageAtStart[0].toFixed(1)} → ${results.meta.loadAverageAtEnd[0].toFixed(1)}`
console.log(`\n${heading}\n`)
console.log(formatTable(results.rows))
console.log(`\n${formatBars(results.bars)}`)
await writeResults(options.out, results)
log(`\nresults written to ${options.out}`)
if (options.svg) {
  const subtitle =
    `${results.meta.mode} run, node ${process.version}, ${results.meta.cpus} CPUs; medians; ` +
    'peer = the SDK unless the case names another; bars right of 1: ours faster or smaller'
  await mkdir(dirname(options.svg), { recursive: true })
  await writeFile(options.svg, ratioChart(results.rows, { title: `context-offloader ${ours.version ?? ''} vs @strands-agents/sdk ${sdk.version}`, subtitle }))
  log(`chart written to ${options.svg}`)
}
process.exitCode = results.bars.every((b) => b.pass === true) ? 0 : 1
