// Our InMemoryStorage and FileStorage as the SDK's unified `Storage`
// (`@strands-agents/sdk/storage`), with the SDK's own storages as the oracle:
// the same calls must give the same results and the same errors.
import { afterAll, describe, expect, test } from 'vitest'
import { Agent, StorageError, tool } from '@strands-agents/sdk'
import {
  InMemoryStorage as SdkInMemoryStorage,
  LocalFileStorage as SdkLocalFileStorage,
} from '@strands-agents/sdk/storage'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import * as ours from '../index.js'
import { ScriptedModel, normalizeTimestamps, sdkOffloader, tempDir, textTurn, toolCallTurn } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

function dir(prefix: string): string {
  const d = tempDir(prefix)
  cleanups.push(d.cleanup)
  return d.path
}

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b))

/** Runs `fn` and records its outcome (value or error class + message) for comparison. */
async function outcome(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await fn()
    if (value instanceof Uint8Array) return { bytes: dec(value), type: value.constructor.name }
    return { value: value === undefined ? 'undefined' : value }
  } catch (err: any) {
    return { error: err?.name, message: err?.message, isStorageError: err instanceof StorageError }
  }
}

const LONG = Array.from({ length: 40 }, (_, i) => `segment${i}`).join('/')
const KEYS = [
  'a',
  'a/b',
  '/a/b/',
  'a//b',
  '///a///c///',
  'ab',
  'a/b/c/d/e',
  'a/..b',
  'ключ/значение',
  'emoji/😀',
  'emoji/\uff61',
  'sp ace/key',
  LONG,
  'k'.repeat(300),
  '',
  '/',
  '//',
  '..',
  'a/../b',
  '../escape',
  'a\\b',
  '\\',
]
/**
 * Keys the SDK takes and ours normalises or refuses on purpose (README, "Where we differ"):
 * `.` segments are resolved as a file system resolves them, and names that some platform
 * reads differently (trailing dots, control characters, `:`, device names) are refused.
 */
const DIVERGENT_KEYS: Array<[string, string | null]> = [
  ['x/./y', 'x/y'],
  ['...', null],
  ['tab\tkey', null],
  ['nul\u0000byte', null],
  ['C:.env', null],
  ['dir/CON.txt', null],
  ['a:b', null],
]
const PREFIXES = ['', '/', 'a', 'a/', '/a//', 'a/b', 'emoji/', 'nope', 'x/.', '..', 'a/../', 'a\\', 'segment0/segment1/']

/** One scripted sequence of unified-storage calls; returns every outcome in order. */
async function script(storage: any): Promise<unknown[]> {
  const out: unknown[] = []
  for (const [i, key] of KEYS.entries()) out.push(['write', key, await outcome(() => storage.write(key, enc(`v${i}`)))])
  for (const key of KEYS) out.push(['read', key, await outcome(() => storage.read(key))])
  for (const prefix of PREFIXES) out.push(['list', prefix, await outcome(() => storage.list(prefix))])
  out.push(['overwrite', await outcome(() => storage.write('a/b', enc('second')))])
  out.push(['read after overwrite', await outcome(() => storage.read('a/b'))])
  out.push(['empty value', await outcome(() => storage.write('empty', new Uint8Array(0)))])
  out.push(['read empty', await outcome(() => storage.read('empty'))])
  for (const key of ['a/b', 'a/b', 'missing', 'k'.repeat(300), '', 'a/../b']) out.push(['delete', key, await outcome(() => storage.delete(key))])
  out.push(['list after delete', await outcome(() => storage.list(''))])
  out.push(['read deleted', await outcome(() => storage.read('a/b'))])

  // namespace views: composable, normalised, scoped listings
  const ns = storage.namespace('/ns//one/')
  const nested = ns.namespace('two')
  out.push(['ns write', await outcome(() => ns.write('k', enc('n1')))])
  out.push(['nested write', await outcome(() => nested.write('/deep//k/', enc('n2')))])
  out.push(['ns list', await outcome(() => ns.list(''))])
  out.push(['nested list', await outcome(() => nested.list('deep'))])
  out.push(['ns read', await outcome(() => ns.read('two/deep/k'))])
  out.push(['root sees', await outcome(() => storage.list('ns'))])
  out.push(['ns bad key', await outcome(() => ns.write('../x', enc('x')))])
  out.push(['ns delete', await outcome(() => nested.delete('deep/k'))])
  out.push(['ns list after delete', await outcome(() => ns.list(''))])
  out.push(['namespaced marker', Symbol.for('strands.storage.namespaced') in ns, Symbol.for('strands.storage.namespaced') in nested])
  let nsError: unknown
  try {
    storage.namespace('a/../b')
  } catch (err: any) {
    nsError = { name: err.name, message: err.message }
  }
  out.push(['bad namespace', nsError])
  return out
}

describe('unified Storage: same results and errors as the SDK', () => {
  test('InMemoryStorage matches the SDK InMemoryStorage', async () => {
    const expected = await script(new SdkInMemoryStorage())
    const actual = await script(new ours.InMemoryStorage())
    expect(actual).toEqual(expected)
  })

  test('FileStorage matches the SDK LocalFileStorage', async () => {
    const sdkDir = dir('co-uni-sdk-')
    const ourDir = dir('co-uni-ours-')
    const expected = await script(new SdkLocalFileStorage(sdkDir))
    const actual = await script(new ours.FileStorage(ourDir))
    expect(actual).toEqual(expected)
    // and the two directories hold the same files
    const tree = (root: string) =>
      (readdirSync(root, { recursive: true, withFileTypes: true }) as any[])
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath ?? e.path, e.name).slice(root.length))
        .sort()
    expect(tree(ourDir)).toEqual(tree(sdkDir))
  })

  test('keys that mean different files on different platforms are normalised or refused, on every storage', async () => {
    for (const storage of [new ours.InMemoryStorage(), new ours.FileStorage(dir('co-uni-div-'))]) {
      for (const [key, normalised] of DIVERGENT_KEYS) {
        const sdk = new SdkInMemoryStorage()
        await sdk.write(key, enc('v'))
        expect(await sdk.list('')).toEqual([key.split('/').filter(Boolean).join('/')])
        if (normalised === null) {
          const err = await outcome(() => storage.write(key, enc('v')))
          expect(err).toMatchObject({ error: 'StorageError', isStorageError: true })
          expect((err as { message: string }).message).toMatch(new RegExp(`^Invalid storage key '`))
          expect(await storage.list('')).toEqual([])
        } else {
          await storage.write(key, enc('v'))
          expect(await storage.list('')).toEqual([normalised])
          expect(dec(await storage.read(normalised))).toBe('v')
          await storage.delete(key)
          expect(await storage.list('')).toEqual([])
        }
      }
    }
  })

  test('errors are the SDK StorageError with its messages', async () => {
    for (const storage of [new ours.InMemoryStorage(), new ours.FileStorage(dir('co-uni-err-'))]) {
      await expect(storage.write('a/../b', enc('x'))).rejects.toThrow(StorageError)
      await expect(storage.read('')).rejects.toThrow('Storage key must not be empty')
      await expect(storage.list('a\\')).rejects.toThrow("Invalid storage prefix 'a\\': backslashes are not allowed")
    }
    const file = new ours.FileStorage(dir('co-uni-io-'))
    await file.write('a', enc('x'))
    const err: any = await file.write('a/b', enc('y')).catch((e) => e)
    expect(err).toBeInstanceOf(StorageError)
    expect(err.message).toBe("Failed to write 'a/b' to local storage")
    expect(err.cause).toBeInstanceOf(Error)
  })

  test('InMemoryStorage is marked ephemeral (also its views), FileStorage is not', () => {
    const EPHEMERAL = Symbol.for('strands.storage.ephemeral')
    const memory = new ours.InMemoryStorage()
    expect(EPHEMERAL in memory).toBe(true)
    expect(EPHEMERAL in memory.namespace('x')).toBe(true)
    expect(EPHEMERAL in new ours.FileStorage(dir('co-uni-eph-'))).toBe(false)
  })

  test('offloaded blocks and unified values do not mix', async () => {
    const d = dir('co-uni-mix-')
    const file = new ours.FileStorage(d)
    const ref = await file.store('tool_0', enc('artifact'), 'text/plain')
    await file.write('offloader/tool_0', enc('value'))
    expect(await file.list('')).toEqual(['offloader/tool_0'])
    expect(dec((await file.retrieve(ref)).content)).toBe('artifact')
    const artifactName = ref.split('/').pop()!
    await expect(file.write(artifactName, enc('x'))).rejects.toThrow('reserved for offloaded artifacts')
    await expect(file.read('.metadata.journal')).rejects.toThrow('reserved for offloaded artifacts')

    const memory = new ours.InMemoryStorage()
    const memRef = await memory.store('k', enc('blob'))
    await memory.write('k', enc('value'))
    expect(memory.size).toBe(1)
    expect(await memory.list('')).toEqual(['k'])
    expect(await memory.read(memRef)).toBeNull()
    memory.clear()
    expect(memory.size).toBe(0)
    expect(await memory.list('')).toEqual([])
  })
})

describe('directory interop with the SDK LocalFileStorage', () => {
  const entries: Array<[string, string]> = [
    ['sessions/abc/snapshot.json', '{"v":1}'],
    ['context/s1/scopes/agent/default/tu-1_0', 'x'.repeat(100_000)],
    ['ключ/😀', 'unicode'],
    ['top', 'level'],
  ]

  test('written by the SDK, read by ours', async () => {
    const d = dir('co-interop-a-')
    const sdk = new SdkLocalFileStorage(d)
    for (const [k, v] of entries) await sdk.write(k, enc(v))
    const mine = new ours.FileStorage(d)
    for (const [k, v] of entries) expect(dec(await mine.read(k))).toBe(v)
    expect(await mine.list('')).toEqual(await sdk.list(''))
    expect(await mine.namespace('sessions').list('')).toEqual(await sdk.namespace('sessions').list(''))
    await mine.delete('top')
    expect(await sdk.read('top')).toBeNull()
  })

  test('written by ours, read by the SDK', async () => {
    const d = dir('co-interop-b-')
    const mine = new ours.FileStorage(d)
    for (const [k, v] of entries) await mine.write(k, enc(v))
    const sdk = new SdkLocalFileStorage(d)
    for (const [k, v] of entries) expect(dec(await sdk.read(k))).toBe(v)
    expect(await sdk.list('')).toEqual(await mine.list(''))
    expect(readFileSync(join(d, 'sessions/abc/snapshot.json'), 'utf8')).toBe('{"v":1}')
  })
})

describe('concurrency', () => {
  for (const kind of ['memory', 'file'] as const) {
    test(`Promise.all of writes, reads and lists (${kind})`, async () => {
      const storage: any = kind === 'memory' ? new ours.InMemoryStorage() : new ours.FileStorage(dir('co-uni-conc-'))
      const big = 'b'.repeat(2 * 1024 * 1024)
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => storage.write(`c/${i % 10}/k${i}`, enc(i === 7 ? big : `v${i}`))),
      )
      // the same key from many writers: one whole value survives
      await Promise.all(Array.from({ length: 50 }, (_, i) => storage.write('same', enc(String(i).repeat(1000)))))
      const keys = await storage.list('c/')
      expect(keys.length).toBe(200)
      expect(keys).toEqual([...keys].sort())
      const values = await Promise.all(keys.map((k: string) => storage.read(k)))
      expect(values.every((v: Uint8Array | null) => v !== null)).toBe(true)
      expect(dec(await storage.read('c/7/k7'))!.length).toBe(big.length)
      const same = dec(await storage.read('same'))!
      expect(same).toBe(same.slice(0, same.length / 1000).repeat(1000))
      await Promise.all(keys.map((k: string) => storage.delete(k)))
      expect(await storage.list('c')).toEqual([])
    })
  }
})

const LOG = Array.from({ length: 3000 }, (_, i) =>
  i === 1500 ? 'ERROR code=E4711 disk full' : `INFO request ${i} handled in ${(i * 7) % 91}ms`,
).join('\n')

/** A real Agent whose context manager stashes every message into `storage`. */
async function runContextManager(storage: any) {
  const observed: any = {}
  const model = new ScriptedModel([
    () => toolCallTurn('fetch_logs', 'tu-1', { service: 'db' }),
    (messages) => {
      const text = JSON.stringify(messages[messages.length - 1])
      observed.ref = /\[ref: ([^\]\s]+)\]/.exec(text)?.[1]
      return toolCallTurn('retrieve_context', 'tu-2', { reference: observed.ref, pattern: 'E4711' })
    },
    (messages) => {
      observed.retrieved = JSON.stringify(messages[messages.length - 1])
      return textTurn('done')
    },
  ])
  const fetchLogs = tool({
    name: 'fetch_logs',
    description: 'Returns logs',
    inputSchema: z.object({ service: z.string() }),
    callback: () => LOG,
  })
  const agent = new Agent({ model, tools: [fetchLogs], storage, contextManager: 'auto', printer: false })
  await agent.invoke('What failed?')
  let seen = JSON.stringify(model.seen, (k, v) => (k === 'trackingId' ? '<uuid>' : v))
  seen = seen.split(agent.sessionId).join('<session>')
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
  const keys = (await storage.list('')).map((k: string) => k.split(agent.sessionId).join('<session>').replace(uuid, '<uuid>'))
  return { agent, observed, seen: JSON.parse(seen), keys }
}

describe('as the agent storage', () => {
  test("the SDK's context manager stashes into FileStorage as into LocalFileStorage", { timeout: 120_000 }, async () => {
    const ourDir = dir('co-cm-ours-')
    const o = await runContextManager(new ours.FileStorage(ourDir))
    const s = await runContextManager(new SdkLocalFileStorage(dir('co-cm-sdk-')))
    expect(o.observed.ref).toBe('tu-1_0')
    expect(o.observed.retrieved).toContain('E4711')
    expect(o.keys.length).toBeGreaterThan(0)
    expect(o.keys).toContain('context/<session>/scopes/agent/agent/tu-1_0')
    expect(o.keys).toEqual(s.keys)
    expect(o.seen).toEqual(s.seen)
    // the files are where the SDK's LocalFileStorage puts them
    const stashed = join(ourDir, 'context', o.agent.sessionId, 'scopes/agent/agent/tu-1_0')
    expect(existsSync(stashed)).toBe(true)
    expect(JSON.parse(readFileSync(stashed, 'utf8')).text).toBe(LOG)
  })

  test('the context manager treats InMemoryStorage as ephemeral, FileStorage as durable', async () => {
    const memory = await runContextManager(new ours.InMemoryStorage())
    expect(memory.agent.contextManager!.stashIsDurable).toBe(false)
    expect(memory.observed.retrieved).toContain('E4711')
    const file = await runContextManager(new ours.FileStorage(dir('co-cm-dur-')))
    expect(file.agent.contextManager!.stashIsDurable).toBe(true)
  })

  /** Our plugin or the SDK's, without explicit storage, on an agent whose storage is ours. */
  async function runOffloader(impl: 'ours' | 'sdk', storage: any) {
    const lib: any = impl === 'sdk' ? sdkOffloader : ours
    const observed: any = {}
    const model = new ScriptedModel([
      () => toolCallTurn('fetch_logs', 'tu-1', { service: 'db' }),
      (messages) => {
        const text = JSON.stringify(messages[messages.length - 1])
        observed.ref = /\\n {2}(\S+?) \(text, /.exec(text)?.[1]
        return toolCallTurn('retrieve_offloaded_content', 'tu-2', { reference: observed.ref, pattern: 'E4711' })
      },
      (messages) => {
        observed.retrieved = JSON.stringify(messages[messages.length - 1])
        return textTurn('done')
      },
    ])
    const fetchLogs = tool({
      name: 'fetch_logs',
      description: 'Returns logs',
      inputSchema: z.object({ service: z.string() }),
      callback: () => LOG,
    })
    const agent = new Agent({ model, tools: [fetchLogs], storage, plugins: [new lib.ContextOffloader({})], printer: false })
    await agent.invoke('What failed?')
    let seen = JSON.stringify(model.seen, (k, v) => (k === 'trackingId' ? '<uuid>' : v))
    if (storage.artifactDir) seen = seen.split(storage.artifactDir).join('<dir>')
    return { observed, seen: JSON.parse(normalizeTimestamps(seen)) }
  }

  for (const kind of ['memory', 'file'] as const) {
    test(`our ContextOffloader without explicit storage gives the SDK plugin's output (${kind})`, { timeout: 120_000 }, async () => {
      const make = () => (kind === 'memory' ? new ours.InMemoryStorage() : new ours.FileStorage(dir('co-off-')))
      const o = await runOffloader('ours', make())
      const s = await runOffloader('sdk', make())
      expect(o.observed.ref).toBeDefined()
      if (kind === 'memory') expect(o.observed.ref).toBe('mem_1_tu-1_0')
      else expect(o.observed.ref).toMatch(/\/\d+_1_tu-1_0\.txt$/)
      expect(o.observed.retrieved).toContain('E4711')
      expect(o.seen).toEqual(s.seen)
    })
  }

  test('one InMemoryStorage can be the storage of several agents with our plugin', async () => {
    const shared = new ours.InMemoryStorage()
    const plugins = [new ours.ContextOffloader(), new ours.ContextOffloader()]
    const a = new Agent({ model: new ScriptedModel(), storage: shared, plugins: [plugins[0]], printer: false })
    const b = new Agent({ model: new ScriptedModel(), storage: shared, plugins: [plugins[1]], printer: false })
    // plugins initialise on first use; the second one must not refuse the shared storage
    await (a as any).initialize()
    await (b as any).initialize()
    for (const plugin of plugins) expect((plugin as any)._storage).toBe(shared)
    await shared.write('x', enc('1'))
    expect(await shared.list('')).toEqual(['x'])
  })
})
