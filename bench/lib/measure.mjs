/**
 * Timing and statistics helpers shared by the scenarios.
 *
 * Every comparison interleaves the two implementations (SDK, ours, SDK, ours, ...)
 * so that slow drifts of a noisy machine hit both sides alike, runs un-timed
 * warm-up iterations first, and collects a garbage collection before each timed
 * iteration (when `--expose-gc` is on) so that one side's garbage is not paid for
 * by the other.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Value at quantile `q` (0..1) of `values`, nearest-rank method. */
export function quantile(values, q) {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.ceil(q * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]
}

/** Median, p90, min, max and sample count of a list of numbers. */
export function summarize(values) {
  return {
    median: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    min: Math.min(...values),
    max: Math.max(...values),
    n: values.length,
    samples: values,
  }
}

/**
 * Runs a garbage collection if the process was started with `--expose-gc`: a full one
 * by default, a young-generation one (`'minor'`) for scenarios of microseconds, where
 * the after-effects of a full collection (the first allocations and native calls after
 * it are several times slower) would outweigh the work measured.
 */
export async function collectGarbage(kind = 'full') {
  if (typeof globalThis.gc !== 'function') return
  const collect = () => (kind === 'minor' ? globalThis.gc({ type: 'minor' }) : globalThis.gc())
  collect()
  await new Promise((resolve) => setImmediate(resolve))
  collect()
}

/**
 * One timed iteration: `setup()` (not timed) returns a state, `run(state)` is timed,
 * `teardown(state)` (not timed) cleans up. `run` may instead return its own
 * measurement as `{ value }` (for scenarios that measure something other than
 * wall time); otherwise its wall time in milliseconds is the measurement.
 */
async function iterate(spec, collect) {
  const state = spec.setup ? await spec.setup() : undefined
  await collectGarbage(collect)
  let measurement
  const start = performance.now()
  try {
    const outcome = await spec.run(state)
    const elapsed = performance.now() - start
    measurement = outcome && typeof outcome === 'object' && 'value' in outcome ? outcome.value : elapsed
    if (spec.check) spec.check(outcome, state)
  } finally {
    if (spec.teardown) await spec.teardown(state)
  }
  return measurement
}

/**
 * Measures each side of `specs` ({ sdk, ours }; a missing side is skipped) with
 * interleaved iterations, a garbage collection of kind `collect` before each. Per side, `warmup` untimed runs precede `reps` timed runs;
 * a side may override both with its own `warmup` / `reps`.
 * @returns {Promise<Record<string, ReturnType<typeof summarize>>>}
 */
export async function compare(specs, { warmup, reps, collect = 'full' }) {
  const sides = Object.entries(specs).filter(([, spec]) => spec)
  const samples = Object.fromEntries(sides.map(([side]) => [side, []]))
  const plan = (spec, key, fallback) => spec[key] ?? fallback
  const maxWarmup = Math.max(0, ...sides.map(([, spec]) => plan(spec, 'warmup', warmup)))
  for (let i = 0; i < maxWarmup; i++) {
    for (const [, spec] of sides) if (i < plan(spec, 'warmup', warmup)) await iterate(spec, collect)
  }
  const maxReps = Math.max(0, ...sides.map(([, spec]) => plan(spec, 'reps', reps)))
  for (let i = 0; i < maxReps; i++) {
    for (const [side, spec] of sides) if (i < plan(spec, 'reps', reps)) samples[side].push(await iterate(spec, collect))
  }
  return Object.fromEntries(Object.entries(samples).map(([side, values]) => [side, summarize(values)]))
}

/**
 * Temporary directories: each run gets a fresh directory under one parent per
 * process. A run that wrote a few large files removes its directory right away
 * ({@link removeDir}), so dirty pages do not pile up for writeback. Directories
 * with many small files are only deleted at the very end ({@link removeTempDirs}):
 * on ext4 without a journal (as on many VMs) every recently deleted inode makes
 * new inode allocation slower for about 30 seconds, so deleting thousands of one
 * side's files between runs would charge the next run for it.
 */
let tempRoot

/** Creates a fresh, empty temporary directory for one run. */
export async function freshDir(label) {
  tempRoot ??= await mkdtemp(join(tmpdir(), 'context-offloader-bench-'))
  return mkdtemp(join(tempRoot, `${label}-`))
}

/** Deletes one run's directory (for runs that created only a few files). */
export function removeDir(dir) {
  return rm(dir, { recursive: true, force: true })
}

/** Deletes every directory made by {@link freshDir} (call once, at the end). */
export async function removeTempDirs() {
  if (tempRoot) await rm(tempRoot, { recursive: true, force: true })
  tempRoot = undefined
}

/**
 * Lets the disk settle before a measurement of file creation: flushes dirty pages
 * (`sync`, where there is one), then waits `ms`. On the development machines the file
 * system is mounted with `discard`, and creating files stays slow for about 30 s after
 * large writes or deletes (the SDK's 10,000 stores rewrite its metadata file each time:
 * gigabytes written and freed), so a run that follows another pays for it.
 */
export async function settleDisk(ms) {
  spawnSync('sync', { stdio: 'ignore' })
  await sleep(ms)
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
