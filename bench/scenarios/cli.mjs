/**
 * Scenario: the command-line tool as operators run it, whole processes with start-up
 * included.
 *
 * - `grep` over a 200 MB artifact against `grep -n -C 2 -E` piped through an `awk`
 *   script that prints the retrieval tool's format (the peer column; `LC_ALL=C`, the
 *   fastest grep there is). Both outputs must be the same bytes.
 * - `ls --json` and `gc --expired` over a directory of 100,000 artifacts (no peer ships
 *   such a tool: absolute bars, under 3 s and under 10 s).
 */
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { compare, freshDir, removeDir, sleep, summarize } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 'cli'
export const title = 'Command-line tool: grep over 200 MB vs grep | awk; ls --json and gc --expired over 100,000 artifacts'

const CLI = fileURLToPath(new URL('../../bin/context-offloader.mjs', import.meta.url))
const PATTERN = 'ERROR.*timeout'

/**
 * The retrieval tool's answer from `grep -n -C N` output: a header with the match count,
 * a blank line, then `> N| line` for matches and `  N| line` for context, numbers right
 * aligned to the widest shown, `---` between groups.
 */
const AWK = String.raw`
/^--$/ { rows[++n] = "---"; next }
{
  match($0, /^[0-9]+[:-]/)
  num = substr($0, 1, RLENGTH - 1); sep = substr($0, RLENGTH, 1)
  rows[++n] = num; marks[n] = (sep == ":") ? ">" : " "; texts[n] = substr($0, RLENGTH + 1)
  if (sep == ":") hits++
  last = num
}
END {
  if (hits == 0) exit 1
  printf "[%d match%s for /%s/]\n\n", hits, (hits > 1 ? "es" : ""), pattern
  width = length(last "")
  for (i = 1; i <= n; i++) {
    if (rows[i] == "---") print "---"
    else printf "%s %" width "d| %s\n", marks[i], rows[i], texts[i]
  }
}`

/** Runs `file args` and resolves with its stdout (exit codes 0 and 1 are success, as grep). */
function exec(file, args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env: { ...process.env, ...env }, maxBuffer: 1 << 30, encoding: 'buffer' }, (err, stdout, stderr) => {
      if (err && err.code !== 1) reject(new Error(`${file} ${args.join(' ')}: ${stderr || err.message}`))
      else resolve(stdout)
    })
  })
}

/** About `bytes` of log lines, one in 4,000 an `ERROR ... timeout` (deterministic). */
function bigLog(bytes) {
  const lines = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 4000 === 1234
        ? `2026-11-24T10:${String(i % 60).padStart(2, '0')}:00Z ERROR upstream timeout after ${i % 997} ms (request ${i})`
        : `2026-11-24T10:${String(i % 60).padStart(2, '0')}:00Z INFO  worker=${i % 16} handled request ${i} in ${i % 89} ms`
    lines.push(line)
    size += line.length + 1
  }
  return lines.join('\n')
}

export async function run({ impls, quick }) {
  const rows = []
  const bars = []
  const details = {}
  if (!impls.ours) return { rows, bars: [bar(id, 'cli grep as fast as grep | awk', null, 'ours not loaded')], details }
  const { FileStorage } = impls.ours

  // grep over 200 MB
  const grepDir = await freshDir('cli-grep')
  const bytes = quick ? 50_000_000 : 200_000_000
  const log = Buffer.from(bigLog(bytes))
  const reference = await new FileStorage(grepDir).store('big-log', log, 'text/plain')
  const outputs = { sdk: null, ours: null }
  const results = await compare(
    {
      sdk: {
        run: async () => {
          outputs.sdk = await exec('sh', ['-c', `grep -n -C 2 -E '${PATTERN}' "$1" | awk -v pattern='${PATTERN}' '${AWK}'`, 'sh', reference], { LC_ALL: 'C' })
        },
      },
      ours: {
        run: async () => {
          outputs.ours = await exec(process.execPath, [CLI, 'grep', grepDir, reference, PATTERN, '-C', '2'])
        },
      },
    },
    quick ? { warmup: 1, reps: 3 } : { warmup: 2, reps: 7 },
  )
  const same = Buffer.compare(outputs.sdk, outputs.ours) === 0
  const grepRow = row(id, `grep -C 2 over ${bytes / 1e6} MB, whole process (peer: grep -n -C 2 | awk)`, 'ms', results, { same })
  grepRow.note = `${same ? 'same bytes' : 'OUTPUTS DIFFER'}; ${outputs.ours.toString().split('\n').filter((l) => l.startsWith('>')).length} matches`
  rows.push(grepRow)
  bars.push(bar(id, `cli grep over ${bytes / 1e6} MB: same bytes as grep | awk, and at least as fast`, same && grepRow.ratio >= 1, `${times(grepRow.ratio)}; ${grepRow.note}`))
  await removeDir(grepDir)

  // ls --json and gc --expired over 100,000 artifacts
  const count = quick ? 20_000 : 100_000
  const manyDir = await freshDir('cli-many')
  const now = Date.now()
  const storage = new FileStorage({ artifactDir: manyDir, clock: () => now - 2 * 3_600_000, ttlSeconds: 3_600 })
  const body = new Uint8Array(200).fill(120)
  for (let i = 0; i < count; i++) await storage.store(`tool-${i}`, body, 'text/plain')
  storage.close()
  await sleep(1_000)
  let listed = 0
  const ls = await compare(
    {
      ours: {
        run: async () => {
          const out = await exec(process.execPath, [CLI, 'ls', manyDir, '--json', '--expired'])
          listed = out.toString().split('\n').filter(Boolean).length
        },
      },
    },
    { warmup: 1, reps: quick ? 3 : 5 },
  )
  const lsRow = row(id, `ls --json over ${count.toLocaleString('en-US')} artifacts, whole process`, 'ms', ls, { listed })
  lsRow.note = `${listed.toLocaleString('en-US')} lines`
  rows.push(lsRow)
  bars.push(bar(id, `ls --json over ${count.toLocaleString('en-US')} artifacts under 3 s`, listed === count && ls.ours.median < 3_000, `${ms(ls.ours.median)}; ${lsRow.note}`))
  const start = performance.now()
  const gcOut = JSON.parse((await exec(process.execPath, [CLI, 'gc', manyDir, '--expired', '--json'])).toString())
  const gcMs = performance.now() - start
  const left = readdirSync(manyDir).filter((f) => !f.startsWith('.')).length
  const gcRow = row(id, `gc --expired over ${count.toLocaleString('en-US')} artifacts, whole process (one run)`, 'ms', {
    ours: summarize([gcMs]),
  })
  gcRow.note = `removed ${gcOut.removed.toLocaleString('en-US')}, ${left} files left`
  rows.push(gcRow)
  bars.push(bar(id, `gc --expired over ${count.toLocaleString('en-US')} artifacts under 10 s`, gcOut.removed === count && left === 0 && gcMs < 10_000, `${ms(gcMs)}; ${gcRow.note}`))
  details.grepBytes = bytes
  details.artifacts = count
  return { rows, bars, details }
}
