// The native allocator keeps freed memory mapped for 10 s (mimalloc 3.6's default is 1 s
// times an arena multiplier of 4), so that the stores after a storage was collected reuse
// it instead of faulting fresh pages in; an operator's MIMALLOC_PURGE_DELAY and
// MIMALLOC_ARENA_PURGE_MULT win over it. It never asks for transparent huge pages (the
// first touch of one stalled a store for milliseconds), and leaves huge pages as they
// were for the rest of the process and the processes it starts (mimalloc's `no_thp`
// build switch turns them off for all of them). Checked in fresh processes, as the
// settings are made when the addon loads.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const BINDING = fileURLToPath(new URL('../binding.cjs', import.meta.url))

/** This process's environment without the allocator's settings (mimalloc reads `mimalloc_*` in any case). */
function withoutAllocatorSettings(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of Object.keys(env)) if (/^mimalloc_/i.test(name)) delete env[name]
  return env
}

/** The purge delay a fresh process sees after loading the addon, with `env` added. */
function purgeDelayWith(env: Record<string, string>): number {
  const script = `process.stdout.write(String(require(${JSON.stringify(BINDING)}).allocatorPurgeDelayMs()))`
  const childEnv = { ...withoutAllocatorSettings(), ...env }
  const r = spawnSync(process.execPath, ['-e', script], { env: childEnv, encoding: 'utf8', timeout: 60_000 })
  expect(r.status, r.stderr).toBe(0)
  return Number(r.stdout)
}

/**
 * `THP_enabled` of /proc/self/status (0 when the process has transparent huge pages
 * turned off, `prctl(PR_SET_THP_DISABLE)`) in a fresh process, after loading the addon
 * (`load`) or not, and in a process that one starts.
 */
function thpEnabled(load: boolean): { self: string; child: string } {
  const script = `
    const { readFileSync } = require('node:fs')
    const { execFileSync } = require('node:child_process')
    const enabled = (status) => /THP_enabled:\\s+(\\d)/.exec(status)[1]
    if (${load}) {
      const store = require(${JSON.stringify(BINDING)}).NativeStore.memory(null)
      store.storeBytesNow('k', Buffer.alloc(1 << 22, 97), 'text/plain')
    }
    const child = execFileSync('cat', ['/proc/self/status'], { encoding: 'utf8' })
    process.stdout.write(JSON.stringify({ self: enabled(readFileSync('/proc/self/status', 'utf8')), child: enabled(child) }))`
  const r = spawnSync(process.execPath, ['-e', script], { env: withoutAllocatorSettings(), encoding: 'utf8', timeout: 60_000 })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout)
}

/** The system's transparent huge page mode (`always`, `madvise` or `never`). */
function hugePageMode(): string {
  const setting = readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8')
  return /\[(\w+)\]/.exec(setting)![1]!
}

/** Kilobytes of anonymous huge pages a fresh process holds after storing `mb` MB natively. */
function hugePagesAfterStoring(mb: number): { before: number; after: number; held: number } {
  const script = `
    const { readFileSync } = require('node:fs')
    const huge = () => Number(/AnonHugePages:\\s+(\\d+)/.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'))[1])
    const before = huge()
    const native = require(${JSON.stringify(BINDING)})
    const store = native.NativeStore.memory(null)
    const chunk = Buffer.alloc(1 << 20, 97)
    for (let i = 0; i < ${mb}; i++) store.storeBytesNow('k' + i, chunk, 'text/plain')
    // Short texts, as most offloads are: many small allocations.
    const text = 'y'.repeat(100000)
    for (let i = 0; i < ${mb}; i++) store.storeLatin1Now('t' + i, text, 'text/plain')
    process.stdout.write(JSON.stringify({ before, after: huge(), held: store.byteLength }))`
  const r = spawnSync(process.execPath, ['-e', script], { env: withoutAllocatorSettings(), encoding: 'utf8', timeout: 60_000 })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout)
}

describe('the native allocator', () => {
  it.runIf(process.platform === 'linux')('asks for no transparent huge pages for what is stored', () => {
    const { before, after, held } = hugePagesAfterStoring(64)
    expect(held).toBe(64 * (1 << 20) + 64 * 100_000)
    // Where the system gives huge pages only to memory that asks for them, none is given.
    // (Under `always` the kernel gives them to any large enough mapping: nothing to check.)
    if (hugePageMode() !== 'always') expect(after - before).toBeLessThan(2048)
  })

  it.runIf(process.platform === 'linux')('leaves huge pages as they were for the process and the processes it starts', () => {
    // A process that does not load the addon has huge pages on (THP_enabled is the
    // per-process switch, whatever the system's mode): were they off here, inherited from
    // whatever started the tests, this test could not tell anything and says so.
    const without = thpEnabled(false)
    expect(without, 'this test process was started with huge pages turned off (prctl): nothing to compare').toEqual({ self: '1', child: '1' })
    expect(thpEnabled(true)).toEqual(without)
  })

  it('keeps freed memory for reuse for 10 s', () => {
    expect(purgeDelayWith({})).toBe(10_000)
  })

  it('leaves the delay to MIMALLOC_PURGE_DELAY and MIMALLOC_ARENA_PURGE_MULT when the environment sets them', () => {
    expect(purgeDelayWith({ MIMALLOC_PURGE_DELAY: '250' })).toBe(250)
    expect(purgeDelayWith({ MIMALLOC_PURGE_DELAY: '-1' })).toBe(-1)
    expect(purgeDelayWith({ MIMALLOC_ARENA_PURGE_MULT: '3' })).toBe(30_000)
    expect(purgeDelayWith({ MIMALLOC_PURGE_DELAY: '250', MIMALLOC_ARENA_PURGE_MULT: '2' })).toBe(500)
    // As mimalloc reads them: in any case, and under the legacy name.
    expect(purgeDelayWith({ mimalloc_purge_delay: '40' })).toBe(40)
    expect(purgeDelayWith({ MIMALLOC_RESET_DELAY: '123' })).toBe(123)
  })
})
