// The search cache from JavaScript: repeated greps answer exactly as uncached ones (the
// budget set to 0 in the same process), and a cached text is never served once the
// content behind its reference changed: deleted and stored again, rewritten, replaced or
// deleted by another process, expired, evicted (cycles and byte budget), cleared. The
// cache's own byte budget is kept. `setSearchCacheBytes` is internal (reached through the
// addon, not exported by the package).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import * as pkg from '../index.js'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { syncClock } from '../lib/lifecycle.js'
import { native } from '../lib/native.js'
import { NATIVE } from '../lib/storage/native-backed.js'
import { Driven, prng, tempDir, textOf } from './helpers/harness.js'

const DEFAULT_BUDGET = 64 * 1024 * 1024
const MAX_CHARS = 10_000
const T0 = 1_800_000_000_000

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))
afterEach(() => native.setSearchCacheBytes(DEFAULT_BUDGET))

const bytes = (s: string) => new TextEncoder().encode(s)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const entries = () => native.searchCacheStats().entries

function dir(): string {
  const d = tempDir('co-search-cache-')
  cleanups.push(d.cleanup)
  return d.path
}

/** Empties the cache (a budget of 0 drops everything) and turns it back on. */
function emptyCache() {
  native.setSearchCacheBytes(0)
  native.setSearchCacheBytes(DEFAULT_BUDGET)
}

type Query = { pattern?: string; line_range?: { start: number; end: number }; context_lines?: number }

/** The storage's native search at the storage's time (rejects when the reference cannot be read). */
function nativeSearch(storage: any, reference: string, query: Query): Promise<any> {
  syncClock(storage, storage[NATIVE])
  const { pattern, line_range, context_lines } = query
  const request = { pattern, lineStart: line_range?.start, lineEnd: line_range?.end, contextLines: context_lines }
  return storage[NATIVE].search(reference, request, MAX_CHARS)
}

/** The native search's answer as the retrieval tool gives it (output or error text). */
async function search(storage: any, reference: string, query: Query): Promise<string> {
  const outcome = await nativeSearch(storage, reference, query)
  return outcome.output ?? outcome.error ?? `binary ${outcome.contentType}`
}

/** Stores `text` through `handle` (the storage's native store, or a tagged one) at the storage's time. */
async function storeThrough(storage: any, handle: any, key: string, text: string): Promise<string> {
  syncClock(storage, storage[NATIVE])
  return (await handle.storeBytes(key, bytes(text), 'text/plain')).reference
}

const ALL: Query = { line_range: { start: 1, end: 1000 } }

/** A random log of `lines` lines, with some non-ASCII and an occasional invalid byte. */
function randomLog(seed: number, lines: number): Uint8Array {
  const random = prng(seed)
  const words = ['ERROR', 'WARN', 'INFO', 'timeout', 'refused', 'worker-7', 'worker-70', 'id=42', 'é', '😀', 'x']
  const out: string[] = []
  for (let i = 0; i < lines; i++) {
    const n = Math.floor(random.next() * 6)
    out.push(Array.from({ length: n }, () => words[Math.floor(random.next() * words.length)]).join(' '))
  }
  const encoded = bytes(out.join('\n'))
  if (seed % 3 === 0 && encoded.length > 10) encoded[Math.floor(encoded.length / 2)] = 0xff
  return encoded
}

const QUERIES: Query[] = [
  { pattern: 'ERROR' },
  { pattern: 'ERROR.*timeout', context_lines: 2 },
  { pattern: 'timeout|refused', context_lines: 0 },
  { pattern: '^WARN', context_lines: 1 },
  { pattern: 'worker-7\\b', context_lines: 3 },
  { pattern: '(?<=id=)\\d+', context_lines: 5 },
  { pattern: '[unclosed' },
  { pattern: 'é|😀', line_range: { start: 5, end: 40 } },
  { line_range: { start: 10, end: 30 } },
  { context_lines: 4 },
]

/** Waits until a file written just now can be cached (its timestamps have settled). */
const settle = () => sleep(120)

/** Runs `script` in a second Node process with `args` (the file to change). */
function otherProcess(script: string, ...args: string[]) {
  const run = spawnSync(process.execPath, ['-e', script, ...args], { encoding: 'utf8' })
  expect(run.status, run.stderr).toBe(0)
}

describe('answers', () => {
  test('setSearchCacheBytes is internal and checks its argument', () => {
    expect('setSearchCacheBytes' in pkg).toBe(false)
    for (const bad of [-1, NaN, Infinity, -Infinity]) {
      expect(() => native.setSearchCacheBytes(bad)).toThrow(/setSearchCacheBytes: the budget must be a finite number of bytes >= 0/)
    }
    expect(() => native.setSearchCacheBytes('1' as any)).toThrow()
    native.setSearchCacheBytes(12_345)
    expect(native.searchCacheStats().budgetBytes).toBe(12_345)
  })

  test.each(['memory', 'file'])('%s: repeated greps answer exactly as uncached ones', async (kind) => {
    const storage: any = kind === 'memory' ? new InMemoryStorage() : new FileStorage(dir())
    const references: Array<[string, Uint8Array]> = []
    for (let seed = 1; seed <= 6; seed++) {
      const content = randomLog(seed, 50 + seed * 20)
      references.push([await storage.store(`k${seed}`, content, 'text/plain'), content])
    }
    if (kind === 'file') await settle()
    native.setSearchCacheBytes(0)
    const expected: string[] = []
    for (const [reference] of references) for (const q of QUERIES) expected.push(await search(storage, reference, q))
    native.setSearchCacheBytes(DEFAULT_BUDGET)
    for (let round = 0; round < 3; round++) {
      const got: string[] = []
      for (const [reference] of references) for (const q of QUERIES) got.push(await search(storage, reference, q))
      expect(got).toEqual(expected)
      expect(entries()).toBe(references.length)
    }
  })

  test('through the retrieval tool: the same answers cached and uncached', async () => {
    const storage = new InMemoryStorage()
    const driven = new Driven(new ContextOffloader({ storage }))
    const reference = await storage.store('k', randomLog(7, 400), 'text/plain')
    const answers = async () => {
      const out: string[] = []
      for (const q of QUERIES) out.push(textOf(await driven.retrieve({ reference, ...q })))
      return out
    }
    native.setSearchCacheBytes(0)
    const uncached = await answers()
    native.setSearchCacheBytes(DEFAULT_BUDGET)
    expect(await answers()).toEqual(uncached)
    expect(await answers()).toEqual(uncached)
  })
})

describe('never stale', () => {
  test('memory: deleted, cleared, evicted by cycles or by the byte budget, expired: the entry goes', async () => {
    emptyCache()
    const clock = { now: T0 }
    const storage: any = new InMemoryStorage({ evictAfterTurns: 2, maxBytes: 1000, clock: () => clock.now })
    const store = (key: string, text: string, ttlSeconds?: number) =>
      ttlSeconds === undefined
        ? storage.store(key, bytes(text), 'text/plain')
        : storeThrough(storage, storage[NATIVE].withTags(null, ttlSeconds * 1000), key, text)

    const a = await store('a', 'alpha\n')
    expect(await search(storage, a, { pattern: 'alpha' })).toContain('alpha')
    expect(entries()).toBe(1)
    expect(storage[NATIVE].delete(a)).toBe(true)
    expect(entries()).toBe(0)
    await expect(nativeSearch(storage, a, { pattern: 'alpha' })).rejects.toThrow(`Reference not found: ${a}`)

    const b = await store('b', 'beta\n')
    await search(storage, b, { pattern: 'beta' })
    storage.clear()
    expect(entries()).toBe(0)

    const idle = await store('idle', 'idle\n')
    await search(storage, idle, { pattern: 'idle' })
    storage._evict(5)
    expect(entries()).toBe(0)

    const big1 = await store('big1', 'x'.repeat(600))
    await search(storage, big1, { pattern: 'x' })
    expect(entries()).toBe(1)
    await store('big2', 'y'.repeat(600))
    expect(entries()).toBe(0)
    await expect(storage.retrieve(big1)).rejects.toThrow(`Reference not found (evicted to stay under maxBytes): ${big1}`)

    const expiring = await store('e', 'soon gone\n', 60)
    expect(await search(storage, expiring, { pattern: 'soon' })).toContain('soon gone')
    expect(await search(storage, expiring, { pattern: 'soon' })).toContain('soon gone')
    clock.now += 60_000
    await expect(nativeSearch(storage, expiring, { pattern: 'soon' })).rejects.toThrow(
      `Reference not found (expired): ${expiring}`,
    )
    expect(entries()).toBe(0)
  })

  test('file: rewritten in place, replaced and deleted by another process while cached', async () => {
    emptyCache()
    const artifactDir = dir()
    const storage: any = new FileStorage(artifactDir)
    const reference = await storage.store('k', bytes('version one\n'), 'text/plain')
    const path = join(artifactDir, readdirSync(artifactDir).find((n) => n.endsWith('.txt'))!)
    const expect1 = (v: string) => `[Lines 1-2 of 2]\n\n  1| ${v}\n  2| `
    await settle()
    expect(await search(storage, reference, ALL)).toBe(expect1('version one'))
    expect(entries()).toBe(1)
    expect(await search(storage, reference, ALL)).toBe(expect1('version one'))

    // In place: same inode, same size, right after the cached search.
    otherProcess(`require('node:fs').writeFileSync(process.argv[1], 'version two\\n')`, path)
    expect(await search(storage, reference, ALL)).toBe(expect1('version two'))
    await settle()
    expect(await search(storage, reference, ALL)).toBe(expect1('version two'))
    expect(entries()).toBe(1)

    // Replaced by a rename: another inode, same size.
    otherProcess(
      `const fs = require('node:fs'); fs.writeFileSync(process.argv[1] + '.new', 'version 333\\n'); fs.renameSync(process.argv[1] + '.new', process.argv[1])`,
      path,
    )
    expect(await search(storage, reference, ALL)).toBe(expect1('version 333'))
    await settle()
    expect(await search(storage, reference, ALL)).toBe(expect1('version 333'))

    // Deleted, then created again under the same name (the inode may be reused).
    otherProcess(`require('node:fs').unlinkSync(process.argv[1])`, path)
    await expect(nativeSearch(storage, reference, { pattern: 'v' })).rejects.toThrow(`Reference not found: ${reference}`)
    otherProcess(`require('node:fs').writeFileSync(process.argv[1], 'version 444\\n')`, path)
    expect(await search(storage, reference, ALL)).toBe(expect1('version 444'))
    await settle()
    expect(await search(storage, reference, ALL)).toBe(expect1('version 444'))
  })

  test('file: expiry, cleanup, session deletion and the byte budget drop entries', async () => {
    emptyCache()
    const clock = { now: T0 }
    const storage: any = new FileStorage({ artifactDir: dir(), maxBytes: 1000, clock: () => clock.now })
    const tagged = (session: string | null, ttlMs: number | null) => storage[NATIVE].withTags(session, ttlMs)
    const store = (handle: any, key: string, text: string) => storeThrough(storage, handle, key, text)

    const expiring = await store(tagged(null, 60_000), 'e', 'soon gone\n')
    const swept = await store(tagged(null, 60_000), 's', 'swept\n')
    const session = await store(tagged('a', null), 'a', 'session a\n')
    await settle()
    for (const [reference, word] of [
      [expiring, 'soon'],
      [swept, 'swept'],
      [session, 'session'],
    ]) {
      expect(await search(storage, reference, { pattern: word })).toContain(word)
    }
    expect(entries()).toBe(3)
    clock.now += 60_000
    await expect(nativeSearch(storage, expiring, { pattern: 'soon' })).rejects.toThrow(
      `Reference not found (expired): ${expiring}`,
    )
    expect(entries()).toBe(2)
    expect(await storage.cleanupExpired()).toBe(1)
    expect(entries()).toBe(1)
    expect(await storage.deleteSession('a')).toBe(1)
    expect(entries()).toBe(0)

    const big1 = await store(storage[NATIVE], 'big1', 'x'.repeat(600))
    await settle()
    await search(storage, big1, { pattern: 'x' })
    expect(entries()).toBe(1)
    await store(storage[NATIVE], 'big2', 'y'.repeat(600))
    expect(entries()).toBe(0)
  })
})

describe('budget', () => {
  test('entries beyond the budget are evicted, least recently used first; a text larger than the budget is not cached', async () => {
    emptyCache()
    const storage = new InMemoryStorage()
    // 2,000 lines: an index of about 16 KB each.
    const content = bytes(Array.from({ length: 2_000 }, (_, i) => `line ${i}`).join('\n'))
    const references = await Promise.all([0, 1, 2, 3].map((i) => storage.store(`k${i}`, content, 'text/plain')))
    native.setSearchCacheBytes(40_000)
    for (const reference of references) {
      expect(await search(storage, reference, { pattern: 'line 7$' })).toContain('line 7')
      expect(native.searchCacheStats().usedBytes).toBeLessThanOrEqual(40_000)
    }
    expect(entries()).toBe(2)
    native.setSearchCacheBytes(10_000)
    expect(entries()).toBe(0)
    expect(await search(storage, references[0], { pattern: 'line 7$' })).toContain('line 7')
    expect(entries()).toBe(0)
    native.setSearchCacheBytes(0)
    expect(native.searchCacheStats()).toEqual({ budgetBytes: 0, usedBytes: 0, entries: 0 })
    expect(await search(storage, references[0], { pattern: 'line 7$' })).toContain('line 7')
    expect(entries()).toBe(0)
  })
})
