/**
 * Child process of the lifecycle scenario: offloads `total` bytes as text results of
 * `bytes` bytes each through one plugin's InMemoryStorage (ours with `maxBytes` when
 * given), then prints the process's peak RSS and what the storage holds as one JSON
 * line. Each side runs in its own fresh process, so the peak is its own.
 *
 * Usage: node lifecycle-child.mjs <sdk|ours> <total> <bytes> <maxBytes|0>
 */
import { createPluginAgent, offload } from '../lib/agent.mjs'
import { logOfSize, textOf } from '../lib/data.mjs'
import { loadSide } from '../lib/impls.mjs'

const [side, totalArg, bytesArg, maxBytesArg] = process.argv.slice(2)
const total = Number(totalArg)
const bytes = Number(bytesArg)
const maxBytes = Number(maxBytesArg)

const impl = await loadSide(side)
const storage = side === 'ours' && maxBytes > 0 ? new impl.InMemoryStorage({ maxBytes }) : new impl.InMemoryStorage()
const { agent } = createPluginAgent(impl, storage)
const source = logOfSize(bytes, 11)
const started = performance.now()
let offloaded = 0
for (let done = 0; done < total; done += bytes) {
  // A fresh flat string per result, dropped after the offload as the agent drops it.
  await offload(agent, textOf(source))
  offloaded += 1
}
const seconds = (performance.now() - started) / 1000
const held = side === 'ours' ? (await storage.stats()).storedBytes : [...storage._store.values()].reduce((n, e) => n + e.content.byteLength, 0)
process.stdout.write(
  JSON.stringify({ side, offloaded, bytes, peakRssMb: process.resourceUsage().maxRSS / 1024, heldMb: held / 1e6, seconds }) + '\n',
)
