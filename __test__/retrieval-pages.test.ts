// Extended answers are built, kept and cut natively: reading every page of a 200 MB
// answer costs at most twice one search (the answer is built once, not once per page),
// and no page request holds the event loop: a jq query with a million results, the full
// retrieval of a 13 MB JSON block, a page of a 200 MB text and a page of a grep that
// matches every line of it all leave timers running. Awaited stores that resolve inline
// still let timers run.
import { afterAll, describe, expect, test } from 'vitest'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { native } from '../lib/native.js'
import { Driven, tempDir } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

const FOOTER = /\n\[Page (\d+) of this answer(?:\. More follows: call again with the same arguments and page: (\d+)|, the last\.)\]$/

/** A log of about `mb` megabytes, one numbered line per entry. */
function bigLog(mb: number): string {
  const line = (i: number) => `2026-11-24T10:00:00Z INFO worker-${i % 16} handled request ${i} in ${i % 97} ms ${'x'.repeat(40)}\n`
  const chunk = Array.from({ length: 10_000 }, (_, i) => line(i)).join('')
  return chunk.repeat(Math.ceil((mb * 1_000_000) / chunk.length))
}

/** The worst gap between the ticks of a 1 ms interval while `work` runs, and its result. */
async function worstLag<T>(work: () => Promise<T>): Promise<{ lag: number; value: T }> {
  let last = performance.now()
  let lag = 0
  const timer = setInterval(() => {
    const now = performance.now()
    lag = Math.max(lag, now - last)
    last = now
  }, 1)
  try {
    await new Promise((r) => setTimeout(r, 5))
    last = performance.now()
    const value = await work()
    lag = Math.max(lag, performance.now() - last)
    return { lag, value }
  } finally {
    clearInterval(timer)
  }
}

function extended(storage: object, maxResultTokens = 2500) {
  const driven = new Driven(new ContextOffloader({ storage, retrieval: 'extended', maxResultTokens, previewTokens: Math.min(1000, maxResultTokens / 2) } as any))
  return driven
}

async function offloadOne(driven: Driven, content: string | any[], key: string): Promise<string> {
  const out = await driven.plugin.offload(content, { key })
  return out.references[0].reference
}

describe('pages come from an answer built once', () => {
  test('every page of a 200 MB answer (a grep matching every line) costs at most twice one search', { timeout: 300_000 }, async () => {
    native.setAnswerCacheBytes(1024 * 1024 * 1024)
    const driven = extended(new InMemoryStorage())
    const reference = await offloadOne(driven, bigLog(200), 'big')
    const input = { reference, pattern: 'request', context_lines: 0 }
    // One search: the first page, with nothing kept.
    native.setAnswerCacheBytes(0)
    native.setAnswerCacheBytes(1024 * 1024 * 1024)
    let started = performance.now()
    const first = await driven.invoke(input)
    const oneSearch = performance.now() - started
    expect(first).toMatch(FOOTER)
    // Every page, from a fresh start (the first page builds the answer again).
    native.setAnswerCacheBytes(0)
    native.setAnswerCacheBytes(1024 * 1024 * 1024)
    started = performance.now()
    let pages = 0
    let bytes = 0
    let page: string = await driven.invoke(input)
    for (;;) {
      pages += 1
      bytes += page.length
      const next = FOOTER.exec(page)?.[2]
      if (!next) break
      page = await driven.invoke({ ...input, page: Number(next) })
    }
    const everyPage = performance.now() - started
    console.log(`one search ${oneSearch.toFixed(0)} ms; all ${pages} pages (${(bytes / 1e6).toFixed(0)} MB) ${everyPage.toFixed(0)} ms: ${(everyPage / oneSearch).toFixed(2)}x`)
    expect(pages).toBeGreaterThan(20_000)
    expect(bytes).toBeGreaterThan(200_000_000)
    expect(page).toMatch(/\[Page \d+ of this answer, the last\.\]$/)
    expect(everyPage).toBeLessThanOrEqual(2 * oneSearch)
    native.setAnswerCacheBytes(512 * 1024 * 1024)
  })

  test('a page past the end, and pages after the artifact is gone, are answered from the store', { timeout: 120_000 }, async () => {
    const dir = tempDir('co-pages-')
    cleanups.push(dir.cleanup)
    const storage = new FileStorage({ artifactDir: dir.path, ttlSeconds: 3600 })
    const driven = extended(storage, 200)
    const reference = await offloadOne(driven, bigLog(1), 'log')
    const input = { reference, pattern: 'worker-3 ', context_lines: 0 }
    const first = await driven.invoke(input)
    const total = Number(/and page: (\d+)/.exec(first)![1]) // at least 2 pages
    expect(total).toBeGreaterThanOrEqual(2)
    expect(await driven.invoke({ ...input, page: 100_000 })).toMatch(/^Error: page 100000 is past the end of this answer \(\d+ pages\)\.$/)
    expect(native.answerCacheStats().entries).toBeGreaterThan(0)
    // Deleted by an operator: the next page is not served from what was kept.
    const { rmSync } = await import('node:fs')
    rmSync(reference)
    expect(await driven.invoke({ ...input, page: 2 })).toBe(`Error: reference not found: ${reference}`)
  })
})

describe('page requests leave the event loop free', () => {
  test('a jq query with a million results', { timeout: 120_000 }, async () => {
    const driven = extended(new InMemoryStorage())
    const reference = await offloadOne(driven, [{ json: { n: 1_000_000, pad: 'x'.repeat(20_000) } }], 'q')
    const { lag, value } = await worstLag(() => driven.invoke({ reference, query: 'range(.n)' }))
    expect(value).toMatch(/^0\n1\n2\n/)
    expect(value).toMatch(FOOTER)
    console.log(`query with 1M results: worst lag ${lag.toFixed(1)} ms`)
    expect(lag).toBeLessThan(100)
  })

  test('the full retrieval of a 13 MB JSON block', { timeout: 120_000 }, async () => {
    const driven = extended(new InMemoryStorage())
    const users = Array.from({ length: 100_000 }, (_, i) => ({ id: i, name: `user-${i}`, email: `user-${i}@example.com`, role: i % 10 ? 'user' : 'admin' }))
    const reference = await offloadOne(driven, [{ json: { users } }], 'j')
    const { lag, value } = await worstLag(() => driven.invoke({ reference }))
    expect(typeof value).toBe('string')
    expect(value).toMatch(FOOTER)
    console.log(`full retrieval of a 13 MB JSON block: worst lag ${lag.toFixed(1)} ms`)
    expect(lag).toBeLessThan(100)
  })

  test('a page of a 200 MB text and of a grep matching every line of it', { timeout: 300_000 }, async () => {
    const driven = extended(new InMemoryStorage())
    const reference = await offloadOne(driven, bigLog(200), 't')
    const full = await worstLag(() => driven.invoke({ reference, page: 3 }))
    expect(full.value).toMatch(/\[Page 3 of this answer\. More follows/)
    const grep = await worstLag(() => driven.invoke({ reference, pattern: 'INFO', context_lines: 0, page: 2 }))
    expect(grep.value).toMatch(/\[Page 2 of this answer\. More follows/)
    console.log(`200 MB: page of the text, worst lag ${full.lag.toFixed(1)} ms; page of a grep of every line ${grep.lag.toFixed(1)} ms`)
    expect(full.lag).toBeLessThan(100)
    expect(grep.lag).toBeLessThan(100)
  })
})

describe('inline stores let timers run', () => {
  test.each([
    ['FileStorage', () => {
      const dir = tempDir('co-yield-')
      cleanups.push(dir.cleanup)
      return new FileStorage(dir.path)
    }],
    ['InMemoryStorage', () => new InMemoryStorage()],
  ])('2,000 awaited 2 KB stores into a %s', { timeout: 120_000 }, async (_, make) => {
    const storage = make()
    const bytes = new Uint8Array(2048).fill(97)
    await storage.store('warm', bytes, 'text/plain')
    let fired = 0
    const timer = setInterval(() => {
      fired += 1
    }, 1)
    const started = performance.now()
    try {
      // At least 2,000 stores, and at least 50 ms of them (memory stores are fast).
      for (let i = 0; i < 2000 || performance.now() - started < 50; i++) await storage.store(`k${i}`, bytes, 'text/plain')
    } finally {
      clearInterval(timer)
    }
    const elapsed = performance.now() - started
    console.log(`${storage.constructor.name}: 2,000 stores in ${elapsed.toFixed(1)} ms, a 1 ms timer fired ${fired} times`)
    // A turn of the event loop at least every few milliseconds of inline work.
    expect(fired).toBeGreaterThanOrEqual(Math.max(3, Math.floor(elapsed / 10)))
  })
})

test('after a slow inline file write, small file writes go to a worker for a second', { timeout: 60_000 }, async () => {
  const dir = tempDir('co-busy-')
  cleanups.push(dir.cleanup)
  const store = native.NativeStore.file(dir.path, false)
  const bytes = new Uint8Array(100).fill(120)
  await store.storeBytes('open', bytes, 'text/plain')
  try {
    // A pause an earlier slow write started (on this loaded machine) ends first.
    native.setSlowInlineWriteMicros(4_000_000_000)
    await new Promise((r) => setTimeout(r, 1_100))
    expect(store.storeBytesNow('a', bytes, 'text/plain')).not.toBeNull()
    // Every inline write counts as slow: the next small write is not made inline.
    native.setSlowInlineWriteMicros(0)
    expect(store.storeBytesNow('b', bytes, 'text/plain')).not.toBeNull()
    expect(store.storeBytesNow('c', bytes, 'text/plain')).toBeNull()
    expect((await store.storeBytes('c', bytes, 'text/plain')).byteLength).toBe(100)
    // A second later, inline writes resume.
    native.setSlowInlineWriteMicros(1_000_000)
    expect(store.storeBytesNow('d', bytes, 'text/plain')).toBeNull()
    await new Promise((r) => setTimeout(r, 1_100))
    expect(store.storeBytesNow('e', bytes, 'text/plain')).not.toBeNull()
  } finally {
    native.setSlowInlineWriteMicros(1_000)
  }
})

describe('kept answers, answered as before', () => {
  test('a page far ahead of the pages found so far is not cut on the event loop', { timeout: 120_000 }, async () => {
    const driven = extended(new InMemoryStorage())
    const reference = await offloadOne(driven, bigLog(20), 'far')
    const { NATIVE } = await import('../lib/storage/native-backed.js')
    const storage = driven.plugin._storage
    const request = { kind: 'search', search: { pattern: 'request', contextLines: 0 } }
    await driven.invoke({ reference, pattern: 'request', context_lines: 0 })
    // Kept, with page 2's start known: cut right away; page 1e9 needs a walk: not here.
    expect(storage[NATIVE].answerNow(reference, request, 2, 10_000)?.text).toMatch(/\[Page 2 of this answer/)
    expect(storage[NATIVE].answerNow(reference, request, 1_000_000_000, 10_000)).toBeNull()
    const { lag, value } = await worstLag(() => driven.invoke({ reference, pattern: 'request', context_lines: 0, page: 1_000_000_000 }))
    expect(value).toMatch(/^Error: page 1000000000 is past the end of this answer \(\d+ pages\)\.$/)
    expect(lag).toBeLessThan(100)
    // Now that the number of pages is known, the last page is cut right away.
    const pages = Number(/\((\d+) pages\)/.exec(value)![1])
    expect(storage[NATIVE].answerNow(reference, request, pages, 10_000)?.text).toMatch(/, the last\.\]$/)
  })

  test('an error a search gives as its answer is given on every page', async () => {
    const driven = extended(new InMemoryStorage())
    const reference = await offloadOne(driven, 'a\nb\nc\n'.repeat(4_000), 'lines')
    const input = { reference, line_range: { start: 50_000, end: 50_001 } }
    const first = await driven.invoke(input)
    expect(first).toMatch(/^Error: /)
    expect(await driven.invoke({ ...input, page: 2 })).toBe(first)
  })

  test('the full retrieval of a JSON string is the string, paged', { timeout: 60_000 }, async () => {
    const driven = extended(new InMemoryStorage())
    const text = Array.from({ length: 3_000 }, (_, i) => `line ${i} "quoted" \\ back`).join('\n')
    const reference = await offloadOne(driven, [{ json: text }], 'jstring')
    const pages: string[] = []
    for (let page = 1; ; page++) {
      const answer: string = await driven.invoke({ reference, page })
      pages.push(answer.replace(FOOTER, ''))
      if (!/More follows/.test(answer)) break
    }
    expect(pages.length).toBeGreaterThan(2)
    expect(pages.join('')).toBe(text)
    // One that fits is the string itself (not parsed again), as before.
    const small = await offloadOne(driven, [{ json: '123' }], 'small')
    expect(await driven.invoke({ reference: small })).toBe('123')
    const object = await offloadOne(driven, [{ json: { a: [1, 2] } }], 'object')
    expect(await driven.invoke({ reference: object })).toEqual({ a: [1, 2] })
  })
})
