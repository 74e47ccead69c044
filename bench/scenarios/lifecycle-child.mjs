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
import { readFileSync } from 'node:fs'

/**
 * This process's own peak RSS in MB. On Linux `getrusage` (`process.resourceUsage()`)
 * carries over the peak of the process that spawned it (the bench, which holds far more),
 * so the peak of this process's memory map, `VmHWM`, is read instead.
 */
function peakRssMb() {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))
    if (hwm) return Number(hwm[1]) / 1024
  } catch {}
  return process.resourceUsage().maxRSS / 1024
}

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
  JSON.stringify({ side, offloaded, bytes, peakRssMb: peakRssMb(), heldMb: held / 1e6, seconds }) + '\n',
)
