// The query document cache from JavaScript, through the retrieval tool in extended mode:
// jq queries on a kept document answer exactly as queries that read the document (the
// cache's budget at 0 in the same process), a kept document is never queried once the
// content behind its reference changed (deleted and stored again, rewritten, replaced or
// deleted by another process, expired, evicted, cleared), and the cache's own byte budget
// holds with many documents. `setQueryCacheBytes` is internal (reached through the addon,
// not exported by the package).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import * as pkg from '../index.js'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { syncClock } from '../lib/lifecycle.js'
import { native } from '../lib/native.js'
import { NATIVE } from '../lib/storage/native-backed.js'
import { Driven, tempDir, textOf } from './helpers/harness.js'

const DEFAULT_BUDGET = 512 * 1024 * 1024
const T0 = 1_800_000_000_000

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))
afterEach(() => native.setQueryCacheBytes(DEFAULT_BUDGET))

const bytes = (s: string) => new TextEncoder().encode(s)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const entries = () => native.queryCacheStats().entries
/** Waits until a file written just now can be cached (its timestamps have settled). */
const settle = () => sleep(120)

function dir(): string {
  const d = tempDir('co-query-cache-')
  cleanups.push(d.cleanup)
  return d.path
}

/** Empties the cache (a budget of 0 drops everything) and turns it back on. */
function emptyCache() {
  native.setQueryCacheBytes(0)
  native.setQueryCacheBytes(DEFAULT_BUDGET)
}

/** A retrieval tool in extended mode over `storage`; `ask` answers a jq query about a reference. */
function tool(storage: any) {
  const driven = new Driven(new ContextOffloader({ storage, retrieval: 'extended', maxResultTokens: 100_000, previewTokens: 100 } as any))
  return async (reference: string, query: string) => {
    syncClock(storage, storage[NATIVE])
    return textOf(await driven.retrieve({ reference, query }))
  }
}

/** Stores `json` as `key` through `handle` (the storage's native store, or a tagged one) at the storage's time. */
async function storeThrough(storage: any, handle: any, key: string, json: string): Promise<string> {
  syncClock(storage, storage[NATIVE])
  return (await handle.storeBytes(key, bytes(json), 'application/json')).reference
}

/** Runs `script` in a second Node process with `args` (the file to change). */
function otherProcess(script: string, ...args: string[]) {
  const run = spawnSync(process.execPath, ['-e', script, ...args], { encoding: 'utf8' })
  expect(run.status, run.stderr).toBe(0)
}

function users(n: number, seed: number): string {
  const roles = ['admin', 'member', 'viewer']
  return JSON.stringify({
    users: Array.from({ length: n }, (_, i) => ({ id: i, name: `user ${seed}-${i} é😀`, role: roles[(i * seed) % 3], logins: (i * 37 * seed) % 1000 })),
    total: n,
  })
}

const QUERIES = [
  '.users[] | select(.role == "admin") | .name',
  '[.users[] | select(.logins > 500)] | length',
  '.total',
  '.users[3] | to_entries',
  '.users[0].nope.deeper',
  '.users[0].name | .x',
  '[paths] | length',
  '.users |= map(.id) | .users[-1]',
  '.',
]

describe('answers', () => {
  test('setQueryCacheBytes is internal and checks its argument', () => {
    expect('setQueryCacheBytes' in pkg).toBe(false)
    for (const bad of [-1, NaN, Infinity, -Infinity]) {
      expect(() => native.setQueryCacheBytes(bad)).toThrow(/setQueryCacheBytes: the budget must be a finite number of bytes >= 0/)
    }
    native.setQueryCacheBytes(12_345)
    expect(native.queryCacheStats().budgetBytes).toBe(12_345)
  })

  test.each(['memory', 'file'])('%s: queries on the kept document answer exactly as queries that read it', async (kind) => {
    emptyCache()
    const storage: any = kind === 'memory' ? new InMemoryStorage() : new FileStorage(dir())
    const ask = tool(storage)
    const references: string[] = []
    for (let seed = 1; seed <= 3; seed++) references.push(await storage.store(`k${seed}`, bytes(users(200 + seed * 50, seed)), 'application/json'))
    if (kind === 'file') await settle()
    native.setQueryCacheBytes(0)
    const expected: string[] = []
    for (const reference of references) for (const q of QUERIES) expected.push(await ask(reference, q))
    expect(entries()).toBe(0)
    expect(expected[2]).toBe('250')
    native.setQueryCacheBytes(DEFAULT_BUDGET)
    for (let round = 0; round < 2; round++) {
      const got: string[] = []
      for (const reference of references) for (const q of QUERIES) got.push(await ask(reference, q))
      expect(got).toEqual(expected)
      // one document per reference, read once
      expect(entries()).toBe(references.length)
    }
    expect(native.queryCacheStats().usedBytes).toBeGreaterThan(3 * 200 * 40)
  })

  test('limits hold on a kept document', async () => {
    emptyCache()
    const storage = new InMemoryStorage()
    const ask = tool(storage)
    const reference = await storage.store('k', bytes(users(2000, 1)), 'application/json')
    expect(await ask(reference, '.total')).toBe('2000')
    expect(entries()).toBe(1)
    const started = performance.now()
    expect(await ask(reference, 'last(range(1e12))')).toMatch(/^Error: query too expensive: /)
    expect(performance.now() - started).toBeLessThan(15_000)
    expect(await ask(reference, 'def f: [f]; f')).toMatch(/^Error: query too expensive: /)
    expect(await ask(reference, '.users | tojson | . * 1000000')).toMatch(/^Error: query too expensive: .*of values/)
    expect(await ask(reference, '.total')).toBe('2000')
  })
})

describe('never stale', () => {
  test('memory: deleted and stored again, cleared, evicted by the byte budget, expired: the document goes', async () => {
    emptyCache()
    const clock = { now: T0 }
    const storage: any = new InMemoryStorage({ maxBytes: 1000, clock: () => clock.now })
    const ask = tool(storage)
    const store = (key: string, json: string, ttlSeconds?: number) =>
      ttlSeconds === undefined ? storage.store(key, bytes(json), 'application/json') : storeThrough(storage, storage[NATIVE].withTags(null, ttlSeconds * 1000), key, json)

    const a = await store('a', '{"v": 1}')
    expect(await ask(a, '.v')).toBe('1')
    expect(entries()).toBe(1)
    expect(storage[NATIVE].delete(a)).toBe(true)
    expect(entries()).toBe(0)
    expect(await ask(a, '.v')).toMatch(/not found/i)
    const again = await store('a', '{"v": 2}')
    expect(await ask(again, '.v + 1')).toBe('3')
    expect(await ask(again, '.v')).toBe('2')

    storage.clear()
    expect(entries()).toBe(0)

    const big1 = await store('big1', JSON.stringify({ x: 'x'.repeat(600) }))
    expect(await ask(big1, '.x | length')).toBe('600')
    expect(entries()).toBe(1)
    await store('big2', JSON.stringify({ y: 'y'.repeat(600) }))
    expect(entries()).toBe(0)
    expect(await ask(big1, '.x | length')).toMatch(/evicted/)

    const expiring = await store('e', '{"soon": "gone"}', 60)
    expect(await ask(expiring, '.soon')).toBe('"gone"')
    expect(entries()).toBe(1)
    clock.now += 60_000
    expect(await ask(expiring, '.soon')).toMatch(/expired/)
    expect(entries()).toBe(0)
  })

  test('file: rewritten in place, replaced and deleted by another process while kept', async () => {
    emptyCache()
    const artifactDir = dir()
    const storage: any = new FileStorage(artifactDir)
    const ask = tool(storage)
    const reference = await storage.store('k', bytes('{"v": "one"}'), 'application/json')
    const path = join(artifactDir, readdirSync(artifactDir).find((n) => n.endsWith('.json'))!)
    await settle()
    expect(await ask(reference, '.v')).toBe('"one"')
    expect(entries()).toBe(1)
    expect(await ask(reference, '.v | length')).toBe('3')

    // In place: same inode, same size, right after the kept query.
    otherProcess(`require('node:fs').writeFileSync(process.argv[1], '{"v": "two"}')`, path)
    expect(await ask(reference, '.v')).toBe('"two"')
    await settle()
    expect(await ask(reference, '.v')).toBe('"two"')
    expect(await ask(reference, '.v | ascii_upcase')).toBe('"TWO"')
    expect(entries()).toBe(1)

    // Replaced by a rename: another inode, same size.
    otherProcess(
      `const fs = require('node:fs'); fs.writeFileSync(process.argv[1] + '.new', '{"v": "333"}'); fs.renameSync(process.argv[1] + '.new', process.argv[1])`,
      path,
    )
    expect(await ask(reference, '.v')).toBe('"333"')
    await settle()
    expect(await ask(reference, '.v')).toBe('"333"')

    // Deleted, then created again under the same name (the inode may be reused).
    otherProcess(`require('node:fs').unlinkSync(process.argv[1])`, path)
    expect(await ask(reference, '.v')).toMatch(/not found/i)
    otherProcess(`require('node:fs').writeFileSync(process.argv[1], '{"v": "444"}')`, path)
    expect(await ask(reference, '.v')).toBe('"444"')
    await settle()
    expect(await ask(reference, '.v')).toBe('"444"')

    // Removed through the storage (its session deleted): the kept document goes at once.
    const tagged = await storeThrough(storage, storage[NATIVE].withTags('s', null), 'sess', '{"v": 5}')
    await settle()
    expect(await ask(tagged, '.v')).toBe('5')
    expect(entries()).toBe(2)
    expect(await storage.deleteSession('s')).toBe(1)
    expect(entries()).toBe(1)
    expect(await ask(tagged, '.v')).toMatch(/not found/i)
  })
})

describe('budget', () => {
  test('many documents: the cache evicts the least recently used and stays within its budget', async () => {
    emptyCache()
    const storage = new InMemoryStorage()
    const ask = tool(storage)
    const references = await Promise.all(Array.from({ length: 8 }, (_, i) => storage.store(`k${i}`, bytes(users(1000, i + 1)), 'application/json')))
    expect(await ask(references[0]!, '.total')).toBe('1000')
    const one = native.queryCacheStats().usedBytes
    expect(one).toBeGreaterThan(50_000)
    const budget = Math.floor(2.5 * one)
    native.setQueryCacheBytes(budget)
    for (const [i, reference] of references.entries()) {
      expect(await ask(reference, '.users[-1].name')).toBe(`"user ${i + 1}-999 é😀"`)
      expect(native.queryCacheStats().usedBytes).toBeLessThanOrEqual(budget)
      expect(entries()).toBeLessThanOrEqual(2)
    }
    expect(entries()).toBe(2)
    // a document larger than the whole budget is answered, not kept
    native.setQueryCacheBytes(Math.floor(one / 2))
    expect(entries()).toBe(0)
    expect(await ask(references[0]!, '.total')).toBe('1000')
    expect(entries()).toBe(0)
    native.setQueryCacheBytes(0)
    expect(native.queryCacheStats()).toEqual({ budgetBytes: 0, usedBytes: 0, entries: 0 })
    expect(await ask(references[1]!, '.total')).toBe('1000')
    expect(entries()).toBe(0)
  })
})
