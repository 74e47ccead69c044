// Stores made while a file storage's directory opens wait for the opening (storeBlocks'
// `OPENING`): what that wait may and may not cost other agents and the event loop.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import * as native from '../binding.cjs'
import { ContextOffloader, FileStorage } from '../index.js'
import { Driven, TextBlock, tempDir, textOf } from './helpers/harness.js'

const work = tempDir('co-review-')
afterAll(() => work.cleanup())

/** The child of storage-races.test.ts: stores into a directory from another process. */
const WRITER = join(__dirname, 'fixtures', 'race-writer.mjs')

/** Runs the race writer's `ttl-writer` for `ms` on `dir`; resolves with what it printed. */
function writeFromAnotherProcess(dir: string, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, 'ttl-writer', dir, String(ms)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => (out += chunk))
    child.stderr.on('data', (chunk) => (err += chunk))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`the writer exited with ${code}: ${err}`))))
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A journal recording `count` artifacts (the files themselves need not exist). */
function journalOf(count: number): string {
  return Array.from({ length: count }, (_, i) => `{"f":"1700000000000_${i}_k${i}.txt","t":"text/plain"}\n`).join('')
}

describe('waiting for the store that opens the directory', () => {
  it("a subclass's slow store for one agent does not hold up another agent's offload", async () => {
    // A subclass that uploads each block elsewhere before storing it (the plugin then goes
    // through `store`, as the SDK does). One agent's upload stalls; another agent's offload
    // has nothing to do with it.
    let release!: () => void
    const stalled = new Promise<void>((resolve) => (release = resolve))
    class Mirrored extends FileStorage {
      async store(key: string, content: Uint8Array, contentType?: string) {
        if (key.startsWith('stalls')) await stalled
        return super.store(key, content, contentType)
      }
    }
    const plugin = new ContextOffloader({ storage: new Mirrored(join(work.path, 'mirrored')), maxResultTokens: 100, previewTokens: 10 })
    const [a, b] = [new Driven(plugin), new Driven(plugin)]
    const first = a.offload([new TextBlock('agent a line\n'.repeat(300))], { toolUseId: 'stalls' })
    await sleep(20)
    const second = b.offload([new TextBlock('agent b line\n'.repeat(300))], { toolUseId: 'quick' })
    const outcome = await Promise.race([second.then(() => 'offloaded'), sleep(2000).then(() => 'still waiting after 2 s')])
    release()
    await Promise.all([first, second])
    expect(outcome).toBe('offloaded')
  })

  it("a small offload of another agent does not wait for the first result's large write", { timeout: 60_000 }, async () => {
    // Opening the directory is what the others wait for; the first result's 66 MB durable
    // write (UTF-8 encoding, write, fsync) is not.
    const proto = native.NativeStore.prototype as any
    const storeText = proto.storeText
    let started!: () => void
    const firstStoreStarted = new Promise<void>((resolve) => (started = resolve))
    proto.storeText = function (this: unknown, ...args: unknown[]) {
      started()
      return storeText.apply(this, args)
    }
    try {
      const storage = new FileStorage({ artifactDir: join(work.path, 'large'), durable: true })
      const plugin = new ContextOffloader({ storage, maxResultTokens: 100, previewTokens: 10 })
      const [a, b] = [new Driven(plugin), new Driven(plugin)]
      const finished: string[] = []
      const big = a.offload([new TextBlock('a big line of text.\n'.repeat(3_300_000))]).then(() => finished.push('large'))
      await firstStoreStarted
      proto.storeText = storeText
      const small = b.offload([new TextBlock('small\n'.repeat(200))]).then(() => finished.push('small'))
      await Promise.all([big, small])
      expect(finished).toEqual(['small', 'large'])
    } finally {
      proto.storeText = storeText
    }
  })

  it('offloads that waited store inline within the inline-work budget, not all in one event-loop turn', { timeout: 60_000 }, async () => {
    // storeBlocks yields (mustYield) before inline stores so a run of them lasts about
    // 2 ms; the stores that waited for the opening skip that check and all run at once.
    native.setSlowInlineWriteMicros(4_000_000_000)
    await sleep(1100)
    const proto = native.NativeStore.prototype as any
    const storeLatin1Now = proto.storeLatin1Now
    let turn = 0
    let ticking = true
    const tick = () => {
      turn++
      if (ticking) setImmediate(tick)
    }
    setImmediate(tick)
    const inlineAt = new Map<number, number[]>()
    proto.storeLatin1Now = function (this: unknown, ...args: unknown[]) {
      const outcome = storeLatin1Now.apply(this, args)
      if (outcome) inlineAt.set(turn, [...(inlineAt.get(turn) ?? []), performance.now()])
      return outcome
    }
    try {
      const dir = join(work.path, 'budget')
      mkdirSync(dir)
      writeFileSync(join(dir, '.metadata.journal'), journalOf(100_000))
      const plugin = new ContextOffloader({ storage: new FileStorage(dir), maxResultTokens: 100, previewTokens: 10 })
      const agents = Array.from({ length: 600 }, () => new Driven(plugin))
      const texts = agents.map((_, i) => `agent ${i} line\n`.repeat(300))
      const results = await Promise.all(agents.map((driven, i) => driven.offload([new TextBlock(texts[i]!)])))
      const ref = /\n {2}(\S+) \(text/.exec(textOf(JSON.parse(JSON.stringify(results[599]))))![1]!
      expect(textOf(await agents[599]!.retrieve({ reference: ref }))).toBe(texts[599])
      let longest = { ms: 0, stores: 0 }
      for (const times of inlineAt.values()) {
        if (times.length > longest.stores) longest = { ms: times[times.length - 1]! - times[0]!, stores: times.length }
      }
      // About 2 ms of stores per turn (a few dozen here, fewer on a loaded machine), not all 600.
      expect(inlineAt.size, 'the stores are spread over turns of the event loop').toBeGreaterThan(3)
      expect(longest.stores, `${longest.stores} inline file stores in one event-loop turn, over ${longest.ms.toFixed(1)} ms`).toBeLessThan(300)
    } finally {
      ticking = false
      proto.storeLatin1Now = storeLatin1Now
      native.setSlowInlineWriteMicros(1_000)
    }
  })

  it('results stored while the directory opens are all kept, racing another process, another storage and the sweeps', { timeout: 60_000 }, async () => {
    const dir = join(work.path, 'racing')
    mkdirSync(dir)
    writeFileSync(join(dir, '.metadata.journal'), journalOf(100_000))
    // Another process stores into the directory all along (about one store per ms, with
    // its own sweep every second), and so does another FileStorage of this process.
    const child = writeFromAnotherProcess(dir, 2500)
    await sleep(200)
    const storage = new FileStorage({ artifactDir: dir, ttlSeconds: 3600, cleanupIntervalSeconds: 1 })
    const other = new FileStorage({ artifactDir: dir, ttlSeconds: 3600 })
    try {
      const plugin = new ContextOffloader({ storage, maxResultTokens: 100, previewTokens: 10 })
      const agents = Array.from({ length: 12 }, () => new Driven(plugin))
      const texts = agents.map((_, i) => `agent ${i} line\n`.repeat(300))
      const bodies = agents.map((_, i) => `stored directly ${i}`)
      const [results, direct] = await Promise.all([
        Promise.all(agents.map((driven, i) => driven.offload([new TextBlock(texts[i]!)]))),
        Promise.all(bodies.map((body, i) => other.store(`direct${i}`, new TextEncoder().encode(body), 'text/plain'))),
      ])
      const written = (await child).split('\n').filter((line) => /^\d+\t/.test(line)).map((line) => line.split('\t') as [string, string])
      expect(written.length).toBeGreaterThan(100)
      await sleep(1200) // a background sweep of `storage` has run since
      const restarted = new FileStorage(dir)
      const read = async (ref: string) => new TextDecoder().decode((await restarted.retrieve(ref)).content)
      for (const [i, result] of results.entries()) {
        const ref = /\n {2}(\S+) \(text/.exec(textOf(JSON.parse(JSON.stringify(result))))![1]!
        expect(textOf(await agents[i]!.retrieve({ reference: ref }))).toBe(texts[i])
        expect(await read(ref)).toBe(texts[i])
      }
      for (const [i, ref] of direct.entries()) expect(await read(ref)).toBe(bodies[i])
      for (const [i, ref] of written) expect(await read(ref)).toBe(`artifact ${i} `.repeat(1 + (Number(i) % 5)))
    } finally {
      storage.close()
      other.close()
    }
  })
})
