/**
 * The artifact lifecycle (ours only has one; the SDK's storages keep everything):
 * - a byte budget: 5 GB of 10 MB results offloaded through `InMemoryStorage({ maxBytes:
 *   256 MiB })`, peak RSS of a fresh process; the SDK's InMemoryStorage is run on 1 GB
 *   (it grows with every result: its peak is past the 1 GB it holds);
 * - dedup: the same 10 MB result offloaded 100 times into each storage, bytes held;
 * - cleanupExpired over 100,000 file artifacts of which half expired, and over 10,000,
 *   to show the per-artifact cost is flat;
 * - stores with a TTL against the same stores without (ours on both columns).
 */
import { execFile } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createPluginAgent, offload } from '../lib/agent.mjs'
import { logOfSize, textOf } from '../lib/data.mjs'
import { compare, freshDir, removeDir, sleep, summarize } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 'lifecycle'
export const title = 'Lifecycle: a byte budget over 5 GB, dedup, cleanup of 100,000 files, stores with a TTL'

const run$ = promisify(execFile)
const CHILD = fileURLToPath(new URL('./lifecycle-child.mjs', import.meta.url))
const MB = 1_000_000
const RESULT = 10 * MB
const BUDGET = 256 * 1024 * 1024
const T0 = 1_800_000_000_000

async function child(side, total, maxBytes) {
  const { stdout } = await run$(process.execPath, [CHILD, side, String(total), String(RESULT), String(maxBytes)], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
    maxBuffer: 1 << 20,
  })
  return JSON.parse(stdout.trim().split('\n').at(-1))
}

/** Bytes a directory really holds: each file (inode) once, `.blobs` included. */
function diskBytes(dir) {
  const seen = new Set()
  let total = 0
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile() && !entry.name.startsWith('.metadata')) {
        const s = statSync(path)
        if (!seen.has(s.ino)) {
          seen.add(s.ino)
          total += s.size
        }
      }
    }
  }
  walk(dir)
  return total
}

const single = (value) => summarize([value])

async function budget(impls, quick) {
  const oursTotal = quick ? 1_000 * MB : 5_000 * MB
  const sdkTotal = quick ? 300 * MB : 1_000 * MB
  const sdk = await child('sdk', sdkTotal, 0)
  const ours = impls.ours ? await child('ours', oursTotal, BUDGET) : null
  const rows = [
    row(id, `peak RSS: SDK ${sdkTotal / MB} MB offloaded, ours ${oursTotal / MB} MB under maxBytes 256 MiB`, 'MB', {
      sdk: single(sdk.peakRssMb),
      ours: ours && single(ours.peakRssMb),
    }),
    row(id, 'bytes held at the end', 'MB', { sdk: single(sdk.heldMb), ours: ours && single(ours.heldMb) }),
  ]
  const limit = 600
  const bars = [
    bar(
      id,
      `peak RSS under ${limit} MB with ${oursTotal / MB} MB offloaded through InMemoryStorage({ maxBytes: 256 MiB })`,
      ours ? ours.peakRssMb < limit : null,
      `ours ${ours?.peakRssMb.toFixed(0)} MB (held ${ours?.heldMb.toFixed(0)} MB, ${ours?.seconds.toFixed(1)} s); SDK ${sdk.peakRssMb.toFixed(0)} MB after only ${sdkTotal / MB} MB (it keeps everything)`,
    ),
  ]
  return { rows, bars }
}

async function dedup(impls) {
  const text = textOf(logOfSize(RESULT, 5))
  const held = {}
  for (const side of ['sdk', 'ours']) {
    const impl = impls[side]
    if (!impl) continue
    const options = side === 'ours' ? { dedup: true } : undefined
    const memory = side === 'ours' ? new impl.InMemoryStorage(options) : new impl.InMemoryStorage()
    const dir = await freshDir(`dedup-${side}`)
    const files = side === 'ours' ? new impl.FileStorage({ artifactDir: dir, ...options }) : new impl.FileStorage(dir)
    const out = {}
    for (const [name, storage] of [['memory', memory], ['files', files]]) {
      const { agent } = createPluginAgent(impl, storage)
      for (let i = 0; i < 100; i++) await offload(agent, text)
      out[name] =
        name === 'files'
          ? diskBytes(dir)
          : side === 'ours'
            ? (await storage.stats()).storedBytes
            : [...storage._store.values()].reduce((n, e) => n + e.content.byteLength, 0)
    }
    removeDir(dir)
    held[side] = out
  }
  const rows = ['memory', 'files'].map((target) =>
    row(id, `the same 10 MB result offloaded 100 times to ${target}: content held`, 'MB', {
      sdk: single(held.sdk[target] / MB),
      ours: held.ours && single(held.ours[target] / MB),
    }),
  )
  const bars = [
    bar(
      id,
      'the same 10 MB result 100 times: under 11 MB of content held (memory and files)',
      held.ours ? held.ours.memory < 11 * MB && held.ours.files < 11 * MB : null,
      `ours memory ${(held.ours?.memory / MB).toFixed(1)} MB, files ${(held.ours?.files / MB).toFixed(1)} MB; SDK ${(held.sdk.memory / MB).toFixed(0)} / ${(held.sdk.files / MB).toFixed(0)} MB`,
    ),
  ]
  return { rows, bars }
}

/** A directory of `n` artifacts (even ones expire at T0 + 10 s); the time of a sweep at T0 + 20 s. */
async function sweep(impl, n) {
  const dir = await freshDir(`sweep-${n}`)
  const expiring = new impl.FileStorage({ artifactDir: dir, clock: () => T0, ttlSeconds: 10 })
  const kept = new impl.FileStorage({ artifactDir: dir, clock: () => T0 })
  const body = new TextEncoder().encode('an artifact of a hundred bytes or so, '.repeat(3))
  for (let i = 0; i < n; i += 2) {
    await expiring.store(`e${i}`, body, 'text/plain')
    await kept.store(`k${i}`, body, 'text/plain')
  }
  // Creating many files leaves the file system busy for a while: let it settle.
  await sleep(5_000)
  // Opened (its journal read) before the clock moves, so the timed sweep is cleanupExpired's.
  let now = T0
  const sweeper = new impl.FileStorage({ artifactDir: dir, clock: () => now })
  await sweeper.stats()
  now = T0 + 20_000
  const started = performance.now()
  const removed = await sweeper.cleanupExpired()
  const elapsed = performance.now() - started
  if (removed !== n / 2) throw new Error(`swept ${removed} of ${n / 2}`)
  return { elapsed, perArtifactUs: (elapsed * 1000) / n }
}

async function cleanup(impls, quick) {
  if (!impls.ours) return { rows: [], bars: [] }
  const big = quick ? 20_000 : 100_000
  const large = await sweep(impls.ours, big)
  // After mass deletes the file system is slow to create files for about 30 s.
  await sleep(quick ? 5_000 : 30_000)
  const small = await sweep(impls.ours, big / 10)
  const flat = large.perArtifactUs / small.perArtifactUs
  const rows = [
    row(id, `cleanupExpired over ${big.toLocaleString()} file artifacts, half expired`, 'ms', { ours: single(large.elapsed) }),
    row(id, `cleanupExpired per artifact: ${(big / 10).toLocaleString()} vs ${big.toLocaleString()} artifacts`, 'ms', {
      sdk: single(small.perArtifactUs / 1000),
      ours: single(large.perArtifactUs / 1000),
    }, { note: 'SDK column: the smaller directory (ours)' }),
  ]
  const bars = [
    bar(id, `cleanupExpired over ${big.toLocaleString()} artifacts, half expired, under 10 s`, large.elapsed < 10_000, ms(large.elapsed)),
    bar(
      id,
      'cleanupExpired cost per artifact flat (100,000 vs 10,000 artifacts within 1.5x)',
      flat <= 1.5,
      `${large.perArtifactUs.toFixed(1)} µs vs ${small.perArtifactUs.toFixed(1)} µs per artifact (${times(flat)})`,
    ),
  ]
  return { rows, bars }
}

async function ttlCost(impls, quick) {
  if (!impls.ours) return { rows: [], bars: [] }
  const impl = impls.ours
  const plan = quick ? { warmup: 2, reps: 7, collect: 'minor' } : { warmup: 5, reps: 25, collect: 'minor' }
  const text = textOf(logOfSize(100_000))
  const rows = []
  for (const target of ['memory', 'files']) {
    const spec = (withTtl) => ({
      setup: async () => {
        const dir = target === 'files' ? await freshDir(`ttl-${withTtl}`) : undefined
        const options = withTtl ? { ttlSeconds: 3600 } : {}
        // One storage per agent (an InMemoryStorage serves one agent), as in small-offload.
        const make = () => (dir ? new impl.FileStorage({ artifactDir: dir, ...options }) : new impl.InMemoryStorage(options))
        const items = Array.from({ length: 20 }, () => createPluginAgent(impl, make(), { maxResultTokens: 1000, previewTokens: 250 }))
        if (dir) await items[0].storage.store('warm', new Uint8Array(1), 'text/plain')
        return { dir, items }
      },
      run: async (state) => {
        const started = performance.now()
        for (const item of state.items) await offload(item.agent, text)
        return { value: (performance.now() - started) / 20 }
      },
      teardown: (state) => (state.dir ? removeDir(state.dir) : undefined),
    })
    const results = await compare({ sdk: spec(false), ours: spec(true) }, plan)
    rows.push(row(id, `100 KB offloads to ${target}: without a TTL (SDK column) vs with ttlSeconds`, 'ms', results, { note: 'both columns ours' }))
  }
  const judged = rows.every((r) => r.ratio >= 0.9)
  const bars = [bar(id, 'stores with ttlSeconds no slower than without (ratio >= 0.9)', judged, rows.map((r) => times(r.ratio)).join(', '))]
  return { rows, bars }
}

export async function run({ impls, quick }) {
  const parts = [await ttlCost(impls, quick), await dedup(impls), await budget(impls, quick), await cleanup(impls, quick)]
  return { rows: parts.flatMap((p) => p.rows), bars: parts.flatMap((p) => p.bars) }
}
