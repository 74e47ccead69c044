// FileStorage directories shared by racing writers and sweepers in several processes:
// a background sweep never removes what has not expired, and many writers under one
// maxBytes all finish while the artifacts on disk stay within the budget.
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { FileStorage } from '../index.js'
import { tempDir } from './helpers/harness.js'

const WRITER = join(__dirname, 'fixtures', 'race-writer.mjs')
const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

function dir(prefix = 'co-races-') {
  const d = tempDir(prefix)
  cleanups.push(d.cleanup)
  return d.path
}

/** Runs the race writer with `args`; rejects if it fails or has not ended after `timeoutMs`. */
function run(args: string[], timeoutMs: number) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => (out += chunk))
    child.stderr.on('data', (chunk) => (err += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${args[0]} did not finish within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code === 0 && out.includes('done ')) resolve(out)
      else reject(new Error(`${args[0]} failed (${code}): ${err}`))
    })
  })
}

/** The content of the `i`th artifact of the ttl writer (as race-writer.mjs makes it). */
const ttlBody = (i: number) => new TextEncoder().encode(`artifact ${i} `.repeat(1 + (i % 5)))

/** The numbers of the `done ...` line a child ends with. */
const doneLine = (out: string) => out.slice(out.lastIndexOf('done ')).trim().split(' ').slice(1).map(Number)

/** Bytes of the artifact files in `path` (hidden files are not artifacts); files removed meanwhile are skipped. */
function artifactBytesOnDisk(path: string) {
  let total = 0
  for (const name of readdirSync(path)) {
    if (name.startsWith('.')) continue
    try {
      const st = statSync(join(path, name))
      if (st.isFile()) total += st.size
    } catch {
      // removed between the listing and the look
    }
  }
  return total
}

describe('a background sweep racing a writer', () => {
  test(
    'for 30 s: every reference the writer acknowledged retrieves its exact bytes',
    { timeout: 180_000 },
    async () => {
      const artifactDir = dir()
      // The writer's own storage sweeps every second (cleanupIntervalSeconds: 1); another
      // process sweeps in a loop.
      const [written, swept] = await Promise.all([
        run(['ttl-writer', artifactDir, '30000'], 150_000),
        run(['sweeper', artifactDir, '30000'], 150_000),
      ])
      const refs = written
        .split('\n')
        .filter((line) => line.includes('\t'))
        .map((line) => line.split('\t') as [string, string])
      const [count] = doneLine(written)
      const [removed, sweeps] = doneLine(swept)
      expect(refs.length).toBe(count)
      expect(count).toBeGreaterThan(5_000)
      expect(sweeps).toBeGreaterThan(10)
      expect(removed).toBe(0)
      const fresh = new FileStorage({ artifactDir, ttlSeconds: 3600 })
      const lost: string[] = []
      for (const [i, ref] of refs) {
        try {
          const got = await fresh.retrieve(ref)
          if (!Buffer.from(got.content).equals(Buffer.from(ttlBody(Number(i))))) lost.push(ref)
        } catch {
          lost.push(ref)
        }
      }
      expect(lost).toEqual([])
      expect((await fresh.stats()).artifacts).toBe(count)
      console.log(`sweep race: ${count} artifacts stored in 30 s, ${sweeps} sweeps by the other process, none lost`)
    },
  )
})

describe('writers racing under one maxBytes', () => {
  const BUDGET = 2_000_000
  const LARGEST = 100_000

  /** Runs `children` processes of `writers` concurrent writers each; samples the bytes on disk meanwhile. */
  async function race(children: number, writers: number, stores: number) {
    const artifactDir = dir()
    let most = 0
    let samples = 0
    let running = true
    const sampler = (async () => {
      while (running) {
        most = Math.max(most, artifactBytesOnDisk(artifactDir))
        samples++
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    try {
      const outs = await Promise.all(
        Array.from({ length: children }, (_, c) =>
          run(['budget', artifactDir, String(BUDGET), String(writers), String(stores), String(c + 1)], 120_000),
        ),
      )
      expect(outs.map((out) => doneLine(out)[0])).toEqual(Array(children).fill(writers * stores))
    } finally {
      running = false
      await sampler
    }
    const atEnd = artifactBytesOnDisk(artifactDir)
    const journal = statSync(join(artifactDir, '.metadata.journal')).size
    const total = children * writers * stores
    console.log(
      `${children} x ${writers} writers, ${total} stores: at most ${most} bytes on disk (${samples} samples), ${atEnd} at the end, journal ${journal} bytes`,
    )
    expect(samples).toBeGreaterThan(10)
    expect(most).toBeLessThanOrEqual(BUDGET + LARGEST)
    expect(atEnd).toBeLessThanOrEqual(BUDGET)
    expect(atEnd).toBeGreaterThan(BUDGET - 2 * LARGEST)
    // One stored and at most one removal line per store, of about 100 bytes each.
    expect(journal).toBeLessThan(total * 2 * 200)
    const stats = await new FileStorage({ artifactDir }).stats()
    expect(stats.storedBytes).toBe(atEnd)
  }

  test('4 processes x 4 concurrent writers: every store finishes, the budget holds', { timeout: 180_000 }, async () => {
    await race(4, 4, 150)
  })

  test('1 process x 16 concurrent writers: every store finishes, the budget holds', { timeout: 180_000 }, async () => {
    await race(1, 16, 150)
  })
})
