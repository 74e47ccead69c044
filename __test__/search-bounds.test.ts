// "Search that cannot hang", attacked: a counted repetition that makes every byte
// cost thousands of steps, alone and sixteen at once, while the rest of the process
// (file stores, retrievals, Node's own file I/O) must keep answering.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { Driven, prng, textOf } from './helpers/harness'

const PATTERN = 'a[ab]{10000}[^ab]'

/** 1 MB of random `a`/`b`, one line or lines of 100. */
function abText(seed: number, lineLength: number): string {
  const random = prng(seed)
  let out = ''
  for (let i = 0; i < 1 << 20; i++) {
    out += random.next() < 0.5 ? 'a' : 'b'
    if (lineLength && i % lineLength === lineLength - 1) out += '\n'
  }
  return out
}

/** The retrieval tool's answer text, called as the agent calls it. */
async function search(driven: Driven, reference: string): Promise<string> {
  return textOf(await driven.retrieve({ reference, pattern: PATTERN }))
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('searches are bounded', () => {
  it(`${PATTERN} over 1 MB answers with a result or a clear error within 2 s`, async () => {
    const storage = new InMemoryStorage()
    const driven = new Driven(new ContextOffloader({ storage }))
    for (const [seed, lineLength] of [
      [1, 0],
      [2, 100],
    ]) {
      const reference = await storage.store('k', new TextEncoder().encode(abText(seed, lineLength)), 'text/plain')
      const started = performance.now()
      const answer = await search(driven, reference)
      const elapsed = performance.now() - started
      expect(answer).toMatch(/^(Error: the pattern is too expensive|Error: the search would take longer|No matches found)/)
      expect(elapsed, answer.slice(0, 120)).toBeLessThan(2_000)
    }
  })

  it('sixteen such searches at once leave file stores, retrievals and fs.readFile answering within 50 ms', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-bounds-'))
    dirs.push(dir)
    const memory = new InMemoryStorage()
    const driven = new Driven(new ContextOffloader({ storage: memory }))
    const reference = await memory.store('k', new TextEncoder().encode(abText(3, 0)), 'text/plain')
    const files = new FileStorage(dir)
    const small = new TextEncoder().encode('x'.repeat(1024))
    const plainFile = join(dir, 'plain.txt')
    writeFileSync(plainFile, 'hello')
    const warm = await files.store('warm', small, 'text/plain')
    await files.retrieve(warm)

    const searches = Array.from({ length: 16 }, () => search(driven, reference))
    let settled = false
    const all = Promise.all(searches).finally(() => {
      settled = true
    })
    const timings: Record<string, number[]> = { store: [], retrieve: [], readFile: [] }
    const time = async (name: string, run: () => Promise<unknown>) => {
      const started = performance.now()
      await run()
      timings[name].push(performance.now() - started)
    }
    // Probe while the searches are in flight (at least three rounds).
    let rounds = 0
    while (!settled || rounds < 3) {
      let ref = ''
      await time('store', async () => {
        ref = await files.store(`probe-${rounds}`, small, 'text/plain')
      })
      await time('retrieve', () => files.retrieve(ref))
      await time('readFile', () => readFile(plainFile))
      rounds++
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const answers = await all
    for (const answer of answers) expect(answer).toMatch(/^(Error: the pattern is too expensive|No matches found)/)
    for (const [name, samples] of Object.entries(timings)) {
      expect(Math.max(...samples), `${name}: ${samples.map((s) => s.toFixed(1)).join(', ')}`).toBeLessThan(50)
    }
  })
})
