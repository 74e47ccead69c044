// The native allocator keeps freed memory mapped for 10 s (mimalloc's default is 1 s), so
// that the stores after a storage was collected reuse it instead of faulting fresh pages
// in; an operator's MIMALLOC_PURGE_DELAY wins over it. Checked in fresh processes, as
// the setting is made when the addon loads.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const BINDING = fileURLToPath(new URL('../binding.cjs', import.meta.url))

/** The purge delay a fresh process sees after loading the addon, with `env` added. */
function purgeDelayWith(env: Record<string, string>): number {
  const script = `process.stdout.write(String(require(${JSON.stringify(BINDING)}).allocatorPurgeDelayMs()))`
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env }
  if (!('MIMALLOC_PURGE_DELAY' in env)) delete childEnv.MIMALLOC_PURGE_DELAY
  const r = spawnSync(process.execPath, ['-e', script], { env: childEnv, encoding: 'utf8', timeout: 60_000 })
  expect(r.status, r.stderr).toBe(0)
  return Number(r.stdout)
}

describe('the native allocator', () => {
  it('keeps freed memory for reuse for 10 s', () => {
    expect(purgeDelayWith({})).toBe(10_000)
  })

  it("leaves the delay to MIMALLOC_PURGE_DELAY when the environment sets it", () => {
    expect(purgeDelayWith({ MIMALLOC_PURGE_DELAY: '250' })).toBe(250)
    expect(purgeDelayWith({ MIMALLOC_PURGE_DELAY: '-1' })).toBe(-1)
  })
})
