// The addon loaded only by worker threads, never by the process's main thread (a worker
// pool such as piscina, or a test runner's threads): each worker that loads it, offloads,
// searches and exits leaves the process able to load it again in the next worker. The
// allocator's first thread is then a worker that exits; an allocator that kept that
// thread's state crashed the process (SIGSEGV) when the next worker loaded the addon.
// Checked in a fresh process, as the main thread of the test runner has loaded it.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const coreUrl = new URL('../core.js', import.meta.url).href
const corePath = fileURLToPath(coreUrl)

/**
 * Runs `script` (an ES module) in a fresh Node process; its status, stdout and stderr.
 * Without Node's warnings (an older Node 22 warns about `require()` of ES modules) and
 * without the allocator's own settings from the environment (some print statistics).
 */
function runFresh(script: string) {
  const env: Record<string, string | undefined> = { ...process.env, NODE_NO_WARNINGS: '1' }
  for (const name of Object.keys(env)) if (/^mimalloc_/i.test(name)) delete env[name]
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 100_000 })
}

/** A worker's body: loads the framework-neutral core (ESM or CommonJS), offloads, retrieves and exits. */
const WORKER_BODY = `
  const { parentPort, workerData } = require('node:worker_threads')
  const run = async () => {
    const ours = workerData.commonjs ? require(${JSON.stringify(corePath)}) : await import(${JSON.stringify(coreUrl)})
    const storage = new ours.InMemoryStorage()
    const offloader = new ours.Offloader({ maxResultTokens: 2000, previewTokens: 10, storage })
    const lines = Array.from({ length: 2000 }, (_, i) => 'line ' + i + (i % 97 === 0 ? ' needle' : ' hay'))
    const result = await offloader.offloadResult({ toolName: 't', toolCallId: 'w' + workerData.n, content: lines.join('\\n') })
    const ref = result.references[0].reference
    const found = await offloader.retrievalTool.execute({ reference: ref, pattern: 'needle', context_lines: 0 })
    parentPort.postMessage({ n: workerData.n, offloaded: !result.truncated, found: (found.match(/^> .*needle$/gm) ?? []).length })
  }
  run().catch((err) => { parentPort.postMessage({ n: workerData.n, error: String(err && err.stack || err) }) })`

describe('the addon loaded only by worker threads', () => {
  it('loads again in each new worker after the previous ones exited (ESM and CommonJS, one by one and overlapping)', () => {
    const script = `
      import { Worker } from 'node:worker_threads'
      const body = ${JSON.stringify(WORKER_BODY)}
      const start = (n, commonjs) => new Promise((resolve, reject) => {
        // execArgv: [] so that the worker's body is read as CommonJS (not as this --input-type=module script).
        const worker = new Worker(body, { eval: true, execArgv: [], workerData: { n, commonjs } })
        let message
        worker.once('message', (m) => { message = m })
        worker.once('error', reject)
        worker.once('exit', (code) => resolve({ ...message, code }))
      })
      const outcomes = []
      // One by one: every worker is the only thread that has the addon loaded.
      for (let n = 0; n < 4; n++) outcomes.push(await start(n, n % 2 === 1))
      // Overlapping: two at once, then one after both exited.
      outcomes.push(...(await Promise.all([start(4, false), start(5, true)])))
      outcomes.push(await start(6, false))
      process.stdout.write(JSON.stringify(outcomes))`
    const run = runFresh(script)
    // A crash ends the process by a signal (status null) before it writes anything.
    expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({ status: 0, signal: null, stderr: '' })
    const outcomes = JSON.parse(run.stdout)
    expect(outcomes).toHaveLength(7)
    for (const [n, outcome] of outcomes.entries()) {
      // 2000 lines, one in 97 with the needle (0, 97, ..., 1940): 21 matching lines.
      expect(outcome).toEqual({ n, offloaded: true, found: 21, code: 0 })
    }
  }, 120_000)
})
