// Descriptor-relative file access, attacked: while another process keeps swapping a
// directory of the store for a symbolic link to a directory outside it, the unified
// storage API and the session snapshot files write, read, list and delete below that
// directory for 30 seconds. Nothing may be created, changed or read outside the store.
import { fork } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FileSnapshotStorage, FileStorage } from '../index.js'
import { tempDir } from './helpers/harness'

const RACE_MS = 30_000
const SECRET = 'OUTSIDE-SECRET'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

/** Every file below `dir` with its content. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }) as any[]) {
    if (entry.isFile()) {
      const path = join(entry.parentPath ?? entry.path, entry.name)
      out[path.slice(dir.length)] = readFileSync(path, 'utf8')
    }
  }
  return out
}

/** Starts the swapper on `<root>/<name>`; resolves once it swaps. */
async function startSwapper(root: string, name: string, outside: string) {
  const child = fork(new URL('./fixtures/swapper.mjs', import.meta.url), [root, name, outside], { stdio: 'ignore' })
  let swaps = 0
  child.on('message', (m: any) => {
    if (m && typeof m === 'object') swaps = m.swaps
  })
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('error', reject)
  })
  return { stop: () => child.kill('SIGKILL'), swaps: () => swaps }
}

describe('a directory swapped for a symbolic link while the store works in it', () => {
  it(`for ${RACE_MS / 1000} s, unified writes/reads/lists/deletes and snapshot saves never touch the outside`, { timeout: RACE_MS + 60_000 }, async () => {
    const work = tempDir('co-race-')
    cleanups.push(work.cleanup)
    const outside = join(work.path, 'outside')
    const root = join(work.path, 'root')
    const sessions = join(work.path, 'sessions')
    for (const dir of [outside, root, sessions]) mkdirSync(dir, { recursive: true })
    writeFileSync(join(outside, 'secret'), SECRET)
    writeFileSync(join(outside, 'snapshot_latest.json'), SECRET)
    const before = tree(outside)

    const storage = new FileStorage(root)
    const snapshots = new FileSnapshotStorage(sessions)
    const location = { sessionId: 's1', scope: 'agent', scopeId: 'a1' } as const
    await snapshots.saveSnapshot({ location, isLatest: true, snapshot: { v: 0 } as any })
    const swapValues = await startSwapper(root, 'a', outside)
    // The session's `snapshots` directory is swapped for a link to the outside too.
    const snapshotsDir = join(sessions, 's1', 'scopes', 'agent', 'a1')
    const swapSnapshots = await startSwapper(snapshotsDir, 'snapshots', outside)

    const seen = new Set<string>()
    let operations = 0
    const deadline = Date.now() + RACE_MS
    try {
      while (Date.now() < deadline) {
        const i = operations++ % 7
        const key = `a/${i % 3 === 0 ? 'secret' : `k${i}`}`
        const attempts = [
          () => storage.write(key, new TextEncoder().encode(`value-${i}`)),
          async () => {
            const value = await storage.read(key)
            if (value) seen.add(new TextDecoder().decode(value))
          },
          async () => {
            for (const listed of await storage.list('a/')) seen.add(`listed:${listed}`)
          },
          () => storage.delete(key),
          () => snapshots.saveSnapshot({ location, isLatest: true, snapshot: { v: operations } as any }),
          async () => {
            const loaded = await snapshots.loadSnapshot({ location })
            if (loaded) seen.add(JSON.stringify(loaded))
          },
          () => storage.namespace('a').write('ns-key', new TextEncoder().encode('ns-value')),
        ]
        for (const attempt of attempts) {
          try {
            await attempt()
          } catch {
            // Refused while the link was in place (or the directory was away): fine.
          }
        }
      }
    } finally {
      swapValues.stop()
      swapSnapshots.stop()
    }
    expect(swapValues.swaps() + swapSnapshots.swaps(), 'the swappers ran').toBeGreaterThan(100)
    expect(operations, 'the store worked during the race').toBeGreaterThan(100)
    expect(tree(outside)).toEqual(before)
    expect([...seen].filter((s) => s.includes(SECRET))).toEqual([])
    expect([...seen].filter((s) => s.startsWith('listed:') && !/^listed:a\/(k\d|secret|ns-key)$/.test(s))).toEqual([])
  })
})
