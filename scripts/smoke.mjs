// Loads the package from this checkout with whatever Node runs this script and
// round-trips one block through each storage. The release workflow runs it on
// every platform with each supported Node major (the vitest suites need Node 22).
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const m = await import('../index.js')
for (const name of ['ContextOffloader', 'FileStorage', 'InMemoryStorage']) {
  if (typeof m[name] !== 'function') throw new Error(`missing export: ${name}`)
}
// CommonJS users load it with require() (Node >= 20.19 / 22.12 load ES modules so).
if (process.features.require_module) {
  const required = createRequire(import.meta.url)('../index.js')
  if (required.ContextOffloader !== m.ContextOffloader) throw new Error('require() gave other classes than import')
}

async function roundTrip(storage, label) {
  const reference = await storage.store('smoke', new TextEncoder().encode('hi'), 'text/plain')
  const { content, contentType } = await storage.retrieve(reference)
  const text = new TextDecoder().decode(content)
  if (text !== 'hi' || contentType !== 'text/plain') {
    throw new Error(`${label}: round trip returned ${JSON.stringify({ text, contentType })}`)
  }
}

const dir = mkdtempSync(join(tmpdir(), 'context-offloader-smoke-'))
try {
  await roundTrip(new m.InMemoryStorage(), 'InMemoryStorage')
  await roundTrip(new m.FileStorage(join(dir, 'artifacts')), 'FileStorage')
  new m.ContextOffloader({ storage: new m.InMemoryStorage() })
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`smoke: ok on node ${process.version} ${process.platform}-${process.arch}`)
