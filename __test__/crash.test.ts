// Crash safety: a child process storing into a FileStorage is SIGKILLed at random moments;
// every reference it reported must then retrieve with the same bytes and content type.
import { afterAll, expect, test } from 'vitest'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import * as ours from '../index.js'
import { prng, tempDir } from './helpers/harness.js'

const WRITER = fileURLToPath(new URL('./fixtures/crash-writer.mjs', import.meta.url))
const work = tempDir('co-crash-')
afterAll(() => work.cleanup())

interface Printed {
  ref: string
  sha: string
  contentType: string
}

/** Runs the writer in `dir`; kills it `delayMs` after it is ready (or lets it finish). */
function runWriter(runId: number, seed: number, delayMs: number | null, dir = work.path) {
  return new Promise<{ printed: Printed[]; killed: boolean; done: boolean }>((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, dir, String(runId), String(seed)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    let timer: NodeJS.Timeout | undefined
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      if (delayMs !== null && !timer && out.includes('ready\n')) {
        timer = setTimeout(() => child.kill('SIGKILL'), delayMs)
      }
    })
    child.stderr.on('data', (c) => (err += c))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      if (signal !== 'SIGKILL' && code !== 0) return reject(new Error(`writer failed (${code}): ${err}`))
      // only complete lines count: a line is written with one synchronous write
      const lines = out.split('\n').slice(0, -1)
      const printed = lines
        .filter((l) => l.includes('\t'))
        .map((l) => {
          const [ref, sha, contentType] = l.split('\t')
          return { ref: ref!, sha: sha!, contentType: contentType! }
        })
      resolve({ printed, killed: signal === 'SIGKILL', done: lines.includes('done') })
    })
  })
}

test(
  'references printed before SIGKILL always retrieve with the same bytes and content type',
  { timeout: 180_000 },
  async () => {
    const r = prng(20240601)
    const all: Printed[] = []
    let kills = 0
    for (let run = 0; run < 5; run++) {
      const delay = [5, 30, 100, 250, 500][run]! + r.int(0, 40)
      const res = await runWriter(run, 1000 + run, delay)
      if (res.killed) kills++
      all.push(...res.printed)
      // check after every crash, with a fresh instance (as after a restart)
      const fresh = new ours.FileStorage(work.path)
      for (const p of all) {
        const got = await fresh.retrieve(p.ref)
        expect(createHash('sha256').update(got.content).digest('hex'), p.ref).toBe(p.sha)
        expect(got.contentType, p.ref).toBe(p.contentType)
      }
    }
    expect(kills).toBeGreaterThanOrEqual(3)
    expect(all.length).toBeGreaterThan(0)
    expect(new Set(all.map((p) => p.ref)).size).toBe(all.length)

    // After the crashes the directory is still usable: a full run completes and is readable.
    const final = await runWriter(99, 4242, null)
    expect(final.done).toBe(true)
    expect(final.printed.length).toBe(1000)
    const fresh = new ours.FileStorage(work.path)
    for (const p of [...all, ...final.printed]) {
      const got = await fresh.retrieve(p.ref)
      expect(createHash('sha256').update(got.content).digest('hex')).toBe(p.sha)
      expect(got.contentType).toBe(p.contentType)
    }
    // every artifact file name a reference points at exists in the directory
    const names = new Set(readdirSync(work.path))
    for (const p of final.printed) expect(names.has(p.ref.split('/').pop()!)).toBe(true)
    console.log(`crash test: ${kills} kills, ${all.length} artifacts printed before kills`)
  },
)

test(
  'two processes storing the same keys into one directory lose nothing',
  { timeout: 180_000 },
  async () => {
    const shared = tempDir('co-two-procs-')
    try {
      // Same run id and seed: both write identical keys, sizes and content types at the
      // same time, so equal file names (same millisecond and counter) really happen.
      const [a, b] = await Promise.all([runWriter(7, 777, null, shared.path), runWriter(7, 777, null, shared.path)])
      expect(a.done && b.done).toBe(true)
      const printed = [...a.printed, ...b.printed]
      expect(printed).toHaveLength(2000)
      expect(new Set(printed.map((p) => p.ref)).size).toBe(2000)
      const fresh = new ours.FileStorage(shared.path)
      for (const p of printed) {
        const got = await fresh.retrieve(p.ref)
        expect(createHash('sha256').update(got.content).digest('hex'), p.ref).toBe(p.sha)
        expect(got.contentType, p.ref).toBe(p.contentType)
      }
    } finally {
      shared.cleanup()
    }
  },
)
