/**
 * Scenario: the MCP proxy (`context-offloader mcp -- COMMAND`) as a client reaches it,
 * whole processes over stdio. The upstream is the scripted server of
 * ../fixtures/mcp-server.mjs; the client is the official SDK's `Client` with
 * `StdioClientTransport`, the same in both columns:
 *
 * - peer (SDK column): the client starts the server itself and calls it directly;
 * - ours: the client starts `context-offloader mcp -- node mcp-server.mjs`, which starts
 *   its own copy of the server.
 *
 * Both clients are connected at once and their calls alternate. Cases:
 * - a small `tools/call` (a 22-byte text): the whole round trip, many calls after warm-up
 *   (a young-generation collection before each), the proxy's added time at the median;
 * - a 10 MB (10^7 bytes) text result: the time of the call and the bytes the client read
 *   off the pipe for it. The direct client gets a 64 MiB `maxBufferSize` (its stdio reader
 *   stops at 10 MiB by default), so the baseline works at all; the proxy offloads the
 *   result into its default in-memory store and answers with a preview and a reference;
 * - 100 results of 10 MB relayed one after another through a fresh proxy with
 *   `--max-bytes 256M`: the proxy process's peak RSS (`VmHWM` of its /proc status, its
 *   upstream child not included), and its RSS after every call.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { compare, summarize } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 'mcp'
export const title = 'MCP proxy over stdio: small tools/call added time, a 10 MB result, 100 x 10 MB relayed under --max-bytes 256M'

const CLI = fileURLToPath(new URL('../../bin/context-offloader.mjs', import.meta.url))
const SERVER = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

const BIG = 10_000_000
const SMALL_CALL = { name: 'small', arguments: {} }
const BIG_CALL = { name: 'text', arguments: { bytes: BIG } }
/** The direct client's stdio buffer: room for the 10 MB result (about 10.1 MB as a JSON line). */
const DIRECT_MAX_BUFFER = 64 * 1024 * 1024

/** Bars. */
const ADDED_MS_LIMIT = 1
const RECEIVED_BYTES_LIMIT = 8_000
const PEAK_RSS_LIMIT_MB = 600
const BUDGET = '256M'

/**
 * A connected client over stdio to `args` (run with this node), counting the bytes it
 * reads from the child's stdout. The SDK's transport has no accessor for the pipe; its
 * `_process` is read once here, outside any timed span.
 */
async function connect(args, transportOptions = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, stderr: 'inherit', ...transportOptions })
  const client = new Client({ name: 'context-offloader-bench', version: '1.0.0' })
  await client.connect(transport)
  let bytes = 0
  const stdout = transport._process?.stdout
  if (!stdout) throw new Error('cannot count the bytes received: StdioClientTransport no longer keeps its child in _process')
  stdout.on('data', (chunk) => {
    bytes += chunk.length
  })
  await client.listTools()
  return { client, transport, pid: transport.pid, received: () => bytes }
}

const proxyArgs = (flags) => [CLI, 'mcp', ...flags, '--', process.execPath, SERVER, String(BIG)]

/** `VmRSS` and `VmHWM` of a process, in MB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) * 1024 / 1e6
  return { rssMb: field('VmRSS'), peakMb: field('VmHWM') }
}

/** The text of a tool result's content blocks. */
const textOf = (result) => (result.content ?? []).map((block) => block.text ?? '').join('\n')

/** The time of a small call directly and through the proxy, interleaved. */
async function smallCall(direct, proxied, quick) {
  const results = await compare(
    {
      sdk: { run: () => direct.client.callTool(SMALL_CALL) },
      ours: { run: () => proxied.client.callTool(SMALL_CALL) },
    },
    quick ? { warmup: 30, reps: 201, collect: 'minor' } : { warmup: 200, reps: 1001, collect: 'minor' },
  )
  const r = row(id, 'small tools/call round trip, stdio (peer: the server called directly)', 'ms', results)
  const added = results.ours.median - results.sdk.median
  // Calls alternate, so the i-th samples of the two sides are neighbours in time.
  const paired = summarize(results.ours.samples.map((value, i) => value - results.sdk.samples[i]))
  r.note = `added ${ms(added)} (median of paired differences ${ms(paired.median)})`
  const b = bar(
    id,
    `a small tools/call through the proxy adds under ${ADDED_MS_LIMIT} ms at the median (whole round trip, stdio)`,
    added < ADDED_MS_LIMIT,
    `added ${ms(added)}: direct ${ms(results.sdk.median)}, through the proxy ${ms(results.ours.median)} (p90 ${ms(results.sdk.p90)} / ${ms(results.ours.p90)}); median of paired differences ${ms(paired.median)}`,
  )
  return { rows: [r], bars: [b], details: { addedMs: added, pairedDifference: paired } }
}

/** The time of a 10 MB call directly and through the proxy, interleaved, and the bytes each client read. */
async function bigCall(direct, proxied, quick) {
  const received = { sdk: [], ours: [] }
  const problems = []
  const spec = (side, connection) => ({
    setup: () => ({ before: connection.received() }),
    run: () => connection.client.callTool(BIG_CALL),
    check: (result, state) => {
      received[side].push(connection.received() - state.before)
      const text = textOf(result)
      if (side === 'sdk' && text.length !== BIG) problems.push(`direct: ${text.length} characters instead of ${BIG}`)
      if (side === 'ours' && !/ref_[\w-]+/.test(text)) problems.push('through the proxy: no reference in the answer')
    },
  })
  const results = await compare(
    { sdk: spec('sdk', direct), ours: spec('ours', proxied) },
    quick ? { warmup: 1, reps: 3 } : { warmup: 2, reps: 11 },
  )
  const time = row(id, '10 MB text result, tools/call round trip (peer: the server called directly, maxBufferSize 64 MiB)', 'ms', results)
  const bytes = row(id, '10 MB text result: bytes the client read for the answer', 'bytes', {
    sdk: summarize(received.sdk),
    ours: summarize(received.ours),
  })
  bytes.note = `${(bytes.sdk.median / 1e6).toFixed(2)} MB vs ${bytes.ours.median.toLocaleString('en-US')} bytes`
  const largest = Math.max(...received.ours)
  const fastEnough = time.ratio != null && time.ratio >= 1
  if (problems.length > 0) time.note = `PROBLEMS: ${[...new Set(problems)].join('; ')}`
  const b = bar(
    id,
    `a 10 MB result through the proxy: the client reads under ${RECEIVED_BYTES_LIMIT.toLocaleString('en-US')} bytes, and the call is at least as fast as directly`,
    problems.length === 0 && largest < RECEIVED_BYTES_LIMIT && fastEnough,
    `at most ${largest.toLocaleString('en-US')} bytes read (direct ${(bytes.sdk.median / 1e6).toFixed(2)} MB); ` +
      `direct/proxy ${times(time.ratio)} (direct ${ms(results.sdk.median)}, through the proxy ${ms(results.ours.median)})` +
      (problems.length > 0 ? `; ${[...new Set(problems)].join('; ')}` : ''),
  )
  return { rows: [time, bytes], bars: [b], details: { received } }
}

/** One fresh proxy with `--max-bytes 256M` relaying `count` results of 10 MB, one after another. */
async function relay(count) {
  const proxied = await connect(proxyArgs(['--max-bytes', BUDGET]))
  try {
    const rss = []
    const callMs = []
    let largest = 0
    let reference
    for (let i = 0; i < count; i++) {
      const before = proxied.received()
      const start = performance.now()
      const result = await proxied.client.callTool(BIG_CALL)
      callMs.push(performance.now() - start)
      largest = Math.max(largest, proxied.received() - before)
      reference = /ref_[\w-]+/.exec(textOf(result))?.[0]
      if (!reference) throw new Error(`call ${i + 1}: no reference in the proxy's answer`)
      rss.push(memoryOf(proxied.pid).rssMb)
    }
    const { peakMb, rssMb } = memoryOf(proxied.pid)
    // The last result is still held: its first line comes back.
    const answer = textOf(await proxied.client.callTool({ name: 'retrieve_offloaded_content', arguments: { reference, line_range: { start: 1, end: 1 } } }))
    const readBack = answer.includes('2024-05-01T00:00:00.000Z')
    return { peakMb, rssAtEndMb: rssMb, rssAfterEachCallMb: rss, callMs: summarize(callMs), largestAnswerBytes: largest, readBack }
  } finally {
    await proxied.client.close()
  }
}

async function relayMany(quick, log) {
  const count = quick ? 40 : 100
  if (!existsSync('/proc/self/status')) {
    return { rows: [], bars: [bar(id, `${count} results of 10 MB relayed: proxy peak RSS`, null, 'no /proc: the peak RSS of another process is read from /proc/<pid>/status')], details: null }
  }
  log(`  ${count} x 10 MB relayed…`)
  const runs = []
  for (let i = 0; i < (quick ? 1 : 3); i++) runs.push(await relay(count))
  const peak = summarize(runs.map((r) => r.peakMb))
  const r = row(id, `${count} x 10 MB relayed one after another, --max-bytes ${BUDGET}: proxy peak RSS (VmHWM)`, 'MB', { ours: peak })
  const worst = Math.max(...runs.map((run) => run.peakMb))
  const perCall = summarize(runs.flatMap((run) => run.callMs.samples))
  r.note = `runs ${runs.map((run) => run.peakMb.toFixed(0)).join(', ')} MB; ${ms(perCall.median)} per call`
  const readBack = runs.every((run) => run.readBack)
  const b = bar(
    id,
    `${count} results of 10 MB relayed with --max-bytes ${BUDGET}: proxy peak RSS under ${PEAK_RSS_LIMIT_MB} MB`,
    readBack && worst < PEAK_RSS_LIMIT_MB,
    `highest peak ${worst.toFixed(0)} MB over ${runs.length} run(s) (${runs.map((run) => run.peakMb.toFixed(0)).join(', ')}); ` +
      `RSS at the end ${runs.map((run) => run.rssAtEndMb.toFixed(0)).join(', ')} MB; ${ms(perCall.median)} per call (median); ` +
      `answers at most ${Math.max(...runs.map((run) => run.largestAnswerBytes)).toLocaleString('en-US')} bytes; last result ${readBack ? 'read back' : 'NOT READ BACK'}`,
  )
  return { rows: [r], bars: [b], details: { count, runs } }
}

export async function run({ impls, quick, log }) {
  if (!impls.ours) {
    const skip = (name) => bar(id, name, null, 'ours not loaded')
    return { rows: [], bars: [skip('small tools/call added time'), skip('10 MB result'), skip('100 x 10 MB relayed')], details: null }
  }
  const rows = []
  const bars = []
  const details = {}
  const direct = await connect([SERVER, String(BIG)], { maxBufferSize: DIRECT_MAX_BUFFER })
  const proxied = await connect(proxyArgs([]))
  try {
    log('  small tools/call…')
    const small = await smallCall(direct, proxied, quick)
    log('  10 MB result…')
    const big = await bigCall(direct, proxied, quick)
    for (const part of [small, big]) {
      rows.push(...part.rows)
      bars.push(...part.bars)
    }
    details.small = small.details
    details.big = big.details
  } finally {
    await Promise.all([direct.client.close(), proxied.client.close()])
  }
  const many = await relayMany(quick, log)
  rows.push(...many.rows)
  bars.push(...many.bars)
  details.relay = many.details
  return { rows, bars, details }
}
