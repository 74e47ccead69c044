// One truth for the offload manifest: `list` shows only what the store still holds,
// whichever TTL expired it (the storage's default and clock, the plugin's, offload()'s)
// and whatever removed it (a byte budget, cycle eviction, a sweep, `gc`), and every
// removal path takes the entries with it, leaving no empty session folder behind.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, test } from 'vitest'
import { TextBlock } from '@strands-agents/sdk'
import { InMemoryStorage as SdkUnifiedInMemoryStorage } from '@strands-agents/sdk/storage'
import { ContextOffloader, FileStorage, InMemoryStorage } from '../index.js'
import { MANIFEST_NAMESPACE, sessionSegment } from '../lib/manifest-keys.js'
import { BUDGET_SWEEP_DELAY_MS } from '../lib/manifest-sweep.js'
import { CLI, cli } from './helpers/cli.js'
import { Driven, tempDirs, toolAnswer } from './helpers/harness.js'

const dir = tempDirs('co-truth-')

const T0 = 1_800_000_000_000
const SESSION = 'truth-session'
const big = (tag: string, size = 20_000) => `${tag} line\n`.repeat(Math.ceil(size / (tag.length + 6))).slice(0, size)

/** A plugin driven by a fake agent of a managed session (its manifest persists in the storage). */
function driven(storage: any, options: Record<string, unknown> = {}) {
  const d = new Driven(new ContextOffloader({ storage, references: 'opaque', retrieval: 'extended', ...options }))
  Object.assign(d.agent, { sessionManager: {}, sessionId: SESSION })
  return d
}

const listOf = (d: Driven) => toolAnswer(d.tool, { list: true }, d.agent)
const idsIn = (listing: string) => [...listing.matchAll(/^(ref_[A-Za-z0-9_-]{16}) \|/gm)].map((m) => m[1])
async function offloadedId(d: Driven, tag: string, size?: number) {
  const result = await d.offload([new TextBlock(big(tag, size))])
  return /\n {2}(ref_[A-Za-z0-9_-]{16}) \(text/.exec(result.content[0].text)![1]!
}
/** The entry files of the session's manifest folder, or `null` when the folder is gone. */
function entryFiles(path: string) {
  const folder = join(path, MANIFEST_NAMESPACE, sessionSegment(SESSION))
  return existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.json')).sort() : null
}

describe.each(['file', 'memory'] as const)('%s storage', (kind) => {
  const make = (options: Record<string, unknown>) => {
    const path = kind === 'file' ? dir() : ''
    const storage: any = kind === 'file' ? new FileStorage({ artifactDir: path, ...options }) : new InMemoryStorage(options)
    return { storage, path }
  }
  const manifestKeys = async (storage: any) => (await storage.list(`${MANIFEST_NAMESPACE}/`)).filter((k: string) => k.endsWith('.json'))

  test.each([
    ["the storage's default TTL", { storage: { ttlSeconds: 60 } }],
    ["the plugin's ttlSeconds", { plugin: { ttlSeconds: 60 } }],
    ["offload()'s ttlSeconds", { offload: 60 }],
  ] as const)('an artifact expired by %s leaves list at once and the manifest at the next sweep', async (_, where: any) => {
    const clock = { now: T0 }
    const { storage, path } = make({ clock: () => clock.now, ...(where.storage ?? {}) })
    const d = driven(storage, where.plugin ?? {})
    const kept = await offloadedId(d, 'kept')
    let expiring: string
    if (where.offload) {
      const out = await d.plugin.offload(big('expiring'), { key: 'manual', agent: d.agent, ttlSeconds: where.offload })
      expiring = out.references[0].reference
    } else {
      expiring = await offloadedId(d, 'expiring')
    }
    expect(idsIn(await listOf(d)).sort()).toEqual([kept, expiring].sort())
    // Past the TTL by the storage's clock (the clock the artifacts were tagged with).
    clock.now += 61_000
    const listed = idsIn(await listOf(d))
    if (where.offload) expect(listed).toEqual([kept])
    else expect(listed).toEqual([])
  })

  test.each([
    ["the storage's default TTL", { storage: { ttlSeconds: 60 } }],
    ["the plugin's ttlSeconds", { plugin: { ttlSeconds: 60 } }],
  ] as const)('cleanupExpired takes the manifest entries of what %s expired, and the empty session folder', async (_, where: any) => {
    const clock = { now: T0 }
    const { storage, path } = make({ clock: () => clock.now, ...(where.storage ?? {}) })
    const d = driven(storage, where.plugin ?? {})
    await offloadedId(d, 'one')
    await offloadedId(d, 'two')
    expect(await manifestKeys(storage)).toHaveLength(2)
    clock.now += 61_000
    expect(await storage.cleanupExpired()).toBe(2)
    expect(await storage.list(`${MANIFEST_NAMESPACE}/`)).toEqual([])
    if (kind === 'file') expect(entryFiles(path)).toBeNull()
  })

  test('an artifact evicted under maxBytes leaves list and the manifest', async () => {
    const { storage, path } = make({ maxBytes: 30_000 })
    const d = driven(storage)
    const first = await offloadedId(d, 'first')
    const second = await offloadedId(d, 'second')
    expect(await storage.retrieve((await d.plugin._manifestOf().resolve(SESSION, second)).reference)).toBeTruthy()
    expect(idsIn(await listOf(d))).toEqual([second])
    expect(idsIn(await listOf(d))).not.toContain(first)
    expect(await manifestKeys(storage)).toHaveLength(1)
    if (kind === 'file') expect(entryFiles(path)).toHaveLength(1)
  })

  test('the entry of an artifact evicted under maxBytes goes within a second, unlisted', async () => {
    const { storage, path } = make({ maxBytes: 30_000 })
    const d = driven(storage)
    await offloadedId(d, 'first')
    await offloadedId(d, 'second')
    await new Promise((r) => setTimeout(r, BUDGET_SWEEP_DELAY_MS + 500))
    expect(await manifestKeys(storage)).toHaveLength(1)
    if (kind === 'file') expect(entryFiles(path)).toHaveLength(1)
  })

  test('when every artifact of a session is gone, its sample and folder go too', async () => {
    const clock = { now: T0 }
    const { storage, path } = make({ clock: () => clock.now, ttlSeconds: 10 })
    const d = driven(storage)
    await offloadedId(d, 'a')
    await offloadedId(d, 'b')
    clock.now += 11_000
    expect(await listOf(d)).toMatch(/^Nothing was offloaded/)
    expect(await storage.list(`${MANIFEST_NAMESPACE}/`)).toEqual([])
    if (kind === 'file') expect(existsSync(join(path, MANIFEST_NAMESPACE, sessionSegment(SESSION)))).toBe(false)
    // The session offloads again: a fresh entry, listed and resolvable.
    const again = await offloadedId(d, 'again')
    expect(idsIn(await listOf(d))).toEqual([again])
    expect(await toolAnswer(d.tool, { reference: again, line_range: { start: 1, end: 1 } }, d.agent)).toContain('again line')
  })
})

describe('cycle eviction', () => {
  test('InMemoryStorage: entries of evicted artifacts go with them', async () => {
    const storage: any = new InMemoryStorage()
    const d = driven(storage, { evictAfterCycles: 1 })
    await d.beforeModelCall(0)
    const old = await offloadedId(d, 'old')
    await d.beforeModelCall(3)
    const fresh = await offloadedId(d, 'fresh')
    await d.beforeModelCall(4)
    expect(idsIn(await listOf(d))).toEqual([fresh])
    expect(idsIn(await listOf(d))).not.toContain(old)
    expect((await storage.list(`${MANIFEST_NAMESPACE}/`)).filter((k: string) => k.endsWith('.json'))).toHaveLength(1)
  })

  test("the SDK's unified storage: the plugin's eviction removes the entries of the keys it evicts", async () => {
    const unified: any = new SdkUnifiedInMemoryStorage()
    const d = driven(unified, { evictAfterCycles: 1 })
    await d.beforeModelCall(0)
    await offloadedId(d, 'old')
    await d.beforeModelCall(3)
    const fresh = await offloadedId(d, 'fresh')
    await d.beforeModelCall(4)
    // The forget runs in the background of the hook: give it a turn.
    await new Promise((r) => setTimeout(r, 20))
    expect(idsIn(await listOf(d))).toEqual([fresh])
    const entries = (await unified.list('')).filter((k: string) => k.includes(`${MANIFEST_NAMESPACE}/`) && k.endsWith('.json'))
    expect(entries).toHaveLength(1)
  })
})

describe('operator gc', () => {
  test('gc --expired and gc --session take the manifest entries of what they remove', { timeout: 60_000 }, async () => {
    const path = dir()
    const clock = { now: Date.now() - 7_200_000 }
    const storage: any = new FileStorage({ artifactDir: path, clock: () => clock.now })
    const d = driven(storage, { ttlSeconds: 60 })
    await offloadedId(d, 'expired-one')
    expect(entryFiles(path)).toHaveLength(1)
    const run = await cli(['gc', path, '--expired'])
    expect(run.code, run.stderr).toBe(0)
    expect(entryFiles(path)).toBeNull()
  })

  test('gc from another working directory keeps the entries of live artifacts written under a relative path', { timeout: 60_000 }, async () => {
    // A directory deeper than the writer's working directory, named relative to it.
    const path = join(dir(), 'store', 'artifacts')
    mkdirSync(path, { recursive: true })
    const clock = { now: Date.now() - 7_200_000 }
    // The writer names its directory relative to its own working directory.
    const storage: any = new FileStorage({ artifactDir: relative(process.cwd(), path), clock: () => clock.now })
    const d = driven(storage)
    const kept = await offloadedId(d, 'kept')
    await d.plugin.offload(big('expiring'), { key: 'expiring', agent: d.agent, ttlSeconds: 60 })
    expect(entryFiles(path)).toHaveLength(2)
    const root = dir()
    // Deeper than the writer's directory, so that its relative path means another place from here.
    const elsewhere = join(root, 'a', 'b', 'c', 'd')
    mkdirSync(elsewhere, { recursive: true })
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'gc', path, '--expired'], { cwd: elsewhere, stdio: 'ignore' })
      child.on('error', reject)
      child.on('close', resolve)
    })
    expect(code).toBe(0)
    expect(entryFiles(path)).toHaveLength(1)
    clock.now = Date.now()
    expect(idsIn(await listOf(d))).toEqual([kept])
  })
})
