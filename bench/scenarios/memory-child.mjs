/**
 * Child process of scenario 6 (run with `node --expose-gc`): offloads `count`
 * text results of `bytes` bytes each into one plugin's InMemoryStorage, then
 * reports memory after full garbage collections as one JSON line on stdout.
 *
 * Usage: node --expose-gc memory-child.mjs <sdk|ours> <count> <bytes>
 */
import { createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { logOfSize, textOf } from '../lib/data.mjs'
import { loadSide } from '../lib/impls.mjs'

const [side, countArg, bytesArg] = process.argv.slice(2)
const count = Number(countArg)
const bytes = Number(bytesArg)
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')

async function settle() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const MB = 1_000_000
const snapshot = () => {
  const m = process.memoryUsage()
  return { rss: m.rss / MB, heapUsed: m.heapUsed / MB, heapTotal: m.heapTotal / MB, external: m.external / MB, arrayBuffers: m.arrayBuffers / MB }
}

const impl = await loadSide(side)
const { agent, storage } = createPluginAgent(impl, new impl.InMemoryStorage())
// Warm the code paths with a small offload so the baseline includes compiled code.
const warmRefs = referencesIn(await offload(agent, textOf(logOfSize(50_000))))
await settle()
const before = snapshot()

let source = logOfSize(bytes, 7)
const references = []
for (let i = 0; i < count; i++) {
  // A fresh flat string per result, dropped after the offload as the agent drops it.
  references.push(...referencesIn(await offload(agent, textOf(source))))
}
source = null
await settle()
const after = snapshot()

// Prove the content is still held (and keep the storage reachable past the snapshot).
const last = await storage.retrieve(references.at(-1))
if (last.content.byteLength !== bytes - (bytes % 100)) throw new Error(`unexpected stored size ${last.content.byteLength}`)

process.stdout.write(
  JSON.stringify({
    side,
    count,
    bytes,
    stored: references.length + warmRefs.length,
    before,
    after,
    heapUsedGrowth: after.heapUsed - before.heapUsed,
    externalGrowth: after.external - before.external,
    rssGrowth: after.rss - before.rss,
  }) + '\n',
)
