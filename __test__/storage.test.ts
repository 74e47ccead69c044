// Our storages standalone, and their compatibility with the SDK's (both directions).
import { afterAll, describe, expect, test } from 'vitest'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, basename } from 'node:path'
import * as ours from '../index.js'
import { Driven, TextBlock, JsonBlock, ImageBlock, asJson, prng, sdkOffloader, tempDir, textOf } from './helpers/harness.js'

const T = 60_000
const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))
function dir(prefix = 'co-storage-') {
  const d = tempDir(prefix)
  cleanups.push(d.cleanup)
  return d.path
}
const enc = (s: string) => new TextEncoder().encode(s)
const rand = (n: number, seed: number) => {
  const r = prng(seed)
  return Uint8Array.from({ length: n }, () => r.int(0, 255))
}
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const SAMPLES: Array<{ data: Uint8Array; type?: string }> = [
  { data: enc('hello world') },
  { data: new Uint8Array(0), type: 'text/plain' },
  { data: enc('{"a":1}'), type: 'application/json' },
  { data: rand(4096, 1), type: 'image/png' },
  { data: rand(70_000, 2), type: 'video/mp4' },
  { data: rand(1_000_000, 3), type: 'application/pdf' },
  { data: enc('é中😀\u0000\r\n'), type: 'text/markdown; charset=utf-8' },
  { data: rand(10, 4), type: 'weird/type+x' },
  { data: rand(10, 5), type: '' },
]

describe.each(['memory', 'file'] as const)('%s storage round trips', (kind) => {
  const make = () => (kind === 'memory' ? new ours.InMemoryStorage() : new ours.FileStorage(dir()))
  test('bytes and content types survive store/retrieve', { timeout: T }, async () => {
    const s = make()
    for (const [i, sample] of SAMPLES.entries()) {
      const ref = await s.store(`key-${i}`, sample.data, sample.type)
      const got = await s.retrieve(ref)
      expect(got.content).toBeInstanceOf(Uint8Array)
      expect(Buffer.from(got.content).equals(Buffer.from(sample.data)), `sample ${i}`).toBe(true)
      expect(got.contentType).toBe(sample.type === undefined ? 'text/plain' : sample.type)
    }
  })

  test('content given as Buffer, ArrayBuffer, typed-array view and string', { timeout: T }, async () => {
    const s: any = make()
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9])
    const cases: Array<[any, number[]]> = [
      [Buffer.from([1, 2, 3]), [1, 2, 3]],
      [new Uint8Array([4, 5]).buffer, [4, 5]],
      [new Uint8Array(backing.buffer, 2, 3), [1, 2, 3]],
      [new DataView(backing.buffer, 1, 2), [9, 1]],
      ['é', [0xc3, 0xa9]],
    ]
    for (const [input, expected] of cases) {
      const ref = await s.store('k', input, 'application/octet-stream')
      expect([...(await s.retrieve(ref)).content]).toEqual(expected)
    }
  })

  test('unknown references reject with "Reference not found: <ref>"', { timeout: T }, async () => {
    const s = make()
    await s.store('k', enc('x'))
    for (const ref of ['nope', '', 'mem_99_k', 'mem_1_k ', ' ', '\u0000', '😀']) {
      const err: any = await s.retrieve(ref).then(
        () => undefined,
        (e) => e,
      )
      expect(err).toBeInstanceOf(Error)
      expect(err.message).toBe(`Reference not found: ${ref}`)
    }
  })

  test('keys of 5,000 characters', { timeout: T }, async () => {
    const s = make()
    const key = 'k'.repeat(2500) + '/é😀/'.repeat(500)
    const ref = await s.store(key, enc('long key'), 'text/x-long')
    if (kind === 'memory') expect(ref).toBe(`mem_1_${key}`)
    else for (const part of ref.split('/')) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(255)
    const got = await s.retrieve(ref)
    expect(new TextDecoder().decode(got.content)).toBe('long key')
    expect(got.contentType).toBe('text/x-long')
  })
})

describe('InMemoryStorage specifics', () => {
  test('references mem_<n>_<key>, same as the SDK', { timeout: T }, async () => {
    const s = new ours.InMemoryStorage()
    const t = new sdkOffloader.InMemoryStorage()
    for (const key of ['a', 'tool-1_0', 'with space', 'ü/..\\x', '']) {
      expect(await s.store(key, enc('x'))).toBe(await t.store(key, enc('x')))
    }
  })

  test('clear, size and byteLength', { timeout: T }, async () => {
    const s = new ours.InMemoryStorage()
    expect(s.size).toBe(0)
    expect(s.byteLength).toBe(0)
    const r1 = await s.store('a', new Uint8Array(10))
    await s.store('b', new Uint8Array(1000), 'image/png')
    await s.store('c', new Uint8Array(0))
    expect(s.size).toBe(3)
    expect(s.byteLength).toBe(1010)
    s.clear()
    expect(s.size).toBe(0)
    expect(s.byteLength).toBe(0)
    await expect(s.retrieve(r1)).rejects.toThrow(`Reference not found: ${r1}`)
    // the counter keeps going after clear (as the SDK's)
    expect(await s.store('d', new Uint8Array(1))).toBe('mem_4_d')
  })

  test('evictAfterTurns validation: same errors as the SDK', () => {
    const outcome = (C: any, v: any) => {
      try {
        new C(v)
        return 'ok'
      } catch (e: any) {
        return e.message
      }
    }
    for (const v of [0, -1, 0.5, -Infinity, 1, 1.5, 20, 1e9, Infinity, null, undefined]) {
      expect(outcome(ours.InMemoryStorage, v), String(v)).toBe(outcome(sdkOffloader.InMemoryStorage, v))
    }
    expect(outcome(ours.InMemoryStorage, 0)).toBe('evictAfterTurns must be a positive integer')
    expect(ours.InMemoryStorage.DEFAULT_EVICT_AFTER_TURNS).toBe(20)
    // Divergence (documented): NaN and non-numbers, which the SDK takes silently, are refused.
    expect(outcome(sdkOffloader.InMemoryStorage, NaN)).toBe('ok')
    expect(outcome(ours.InMemoryStorage, NaN)).toBe('evictAfterTurns must be a positive number of cycles or null, got number NaN')
    expect(outcome(ours.InMemoryStorage, '2')).toBe("evictAfterTurns must be a positive number of cycles or null, got '2'")
  })

  test('an infinite evictAfterTurns is accepted as "never evict", as by the SDK', async () => {
    for (const v of [Infinity]) {
      const sdk = new sdkOffloader.InMemoryStorage(v)
      const s = new ours.InMemoryStorage(v)
      for (const st of [sdk, s] as any[]) {
        const ref = await st.store('k', enc('kept'))
        st._evict(1_000_000)
        expect(new TextDecoder().decode((await st.retrieve(ref)).content)).toBe('kept')
      }
    }
  })

  test('cannot be shared across two agents (as the SDK)', () => {
    const s = new ours.InMemoryStorage()
    new Driven(new ours.ContextOffloader({ storage: s }))
    expect(() => new Driven(new ours.ContextOffloader({ storage: s }))).toThrow(
      'InMemoryStorage cannot be shared across multiple agents. Use a separate InMemoryStorage instance per agent.',
    )
  })
})

describe('FileStorage specifics', () => {
  test('standalone references have the SDK FileStorage form <dir>/<ms>_<n>_<key><ext>', { timeout: T }, async () => {
    const d = dir()
    const s = new ours.FileStorage(d)
    expect(s.artifactDir).toBe(d)
    const cases: Array<[string, string | undefined, string]> = [
      ['tool-1_0', undefined, '.txt'],
      ['a/../b c', 'application/json', '.json'],
      ['x', 'image/png', '.png'],
      ['y', 'application/vnd.ms-excel', '.vnd.ms-excel'],
    ]
    let n = 0
    for (const [key, type, ext] of cases) {
      const ref = await s.store(key, enc('x'), type)
      n++
      const sanitized = key.replace(/\.\./g, '_').replace(/[/\\]/g, '_').replace(/[^\w\-.]/g, '_')
      expect(ref).toMatch(new RegExp(`^${escapeRe(d + '/')}\\d{13}_${n}_${escapeRe(sanitized)}${escapeRe(ext)}$`))
    }
  })

  test('references that escape the directory are rejected as not found', { timeout: T }, async () => {
    const root = dir()
    const d = join(root, 'artifacts')
    const s = new ours.FileStorage(d)
    const ref = await s.store('inside', enc('inside'))
    writeFileSync(join(root, 'outside.txt'), 'secret')
    mkdirSync(`${d}-evil`)
    writeFileSync(join(`${d}-evil`, 'f.txt'), 'evil')
    symlinkSync(join(root, 'outside.txt'), join(d, 'link.txt'))
    mkdirSync(join(d, 'sub'))
    const bad = [
      '..',
      '../outside.txt',
      `${d}/../outside.txt`,
      join(root, 'outside.txt'),
      '/etc/passwd',
      `${d}-evil/f.txt`,
      '../artifacts-evil/f.txt',
      join(d, 'link.txt'),
      'link.txt',
      `${ref}\u0000`,
      `${d}/\u0000${basename(ref)}`,
      d,
      `${d}/`,
      join(d, 'sub'),
      `${d}/sub/../../outside.txt`,
    ]
    for (const b of bad) await expect(s.retrieve(b), JSON.stringify(b)).rejects.toThrow(`Reference not found: ${b}`)
    // legitimate forms still work: the full reference, and the bare file name (as the SDK)
    expect(new TextDecoder().decode((await s.retrieve(ref)).content)).toBe('inside')
    expect(new TextDecoder().decode((await s.retrieve(basename(ref))).content)).toBe('inside')
  })

  test('a journal planted as a link (to a file outside, to a missing path) is never written or read', { timeout: T }, async () => {
    for (const target of ['existing', 'missing']) {
      const root = dir()
      const d = join(root, 'artifacts')
      mkdirSync(d)
      const outside = join(root, 'outside.log')
      const record = '{"f":"1_1_planted.txt","t":"text/secret"}\n'
      if (target === 'existing') writeFileSync(outside, record)
      symlinkSync(outside, join(d, '.metadata.journal'))
      writeFileSync(join(d, '1_1_planted.txt'), 'planted')
      const s = new ours.FileStorage({ artifactDir: d, ttlSeconds: 1 })
      expect((await s.retrieve('1_1_planted.txt')).contentType, target).toBe('application/octet-stream')
      await expect(s.store('k', enc('v'), 'text/plain'), target).rejects.toThrow('metadata journal')
      await s.cleanupExpired().catch(() => 0)
      if (target === 'existing') expect(readFileSync(outside, 'utf8')).toBe(record)
      else expect(existsSync(outside)).toBe(false)
      expect(lstatSync(join(d, '.metadata.journal')).isSymbolicLink()).toBe(true)
      expect(readdirSync(d).filter((f) => !f.startsWith('.'))).toEqual(['1_1_planted.txt'])
    }
  })

  test('the SDK metadata planted as a link to a file outside is never read', { timeout: T }, async () => {
    const root = dir()
    const d = join(root, 'artifacts')
    mkdirSync(d)
    writeFileSync(join(root, 'outside.json'), '{"1_1_planted.txt":"text/secret"}')
    symlinkSync(join(root, 'outside.json'), join(d, '.metadata.json'))
    writeFileSync(join(d, '1_1_planted.txt'), 'planted')
    const s = new ours.FileStorage(d)
    expect((await s.retrieve('1_1_planted.txt')).contentType).toBe('application/octet-stream')
    const ref = await s.store('k', enc('v'), 'text/plain')
    expect((await s.retrieve(ref)).contentType).toBe('text/plain')
    expect(readFileSync(join(root, 'outside.json'), 'utf8')).toBe('{"1_1_planted.txt":"text/secret"}')
  })

  test('reads a directory written by the SDK FileStorage (content types preserved)', { timeout: T }, async () => {
    const d = dir()
    const sdk = new sdkOffloader.FileStorage(d)
    const refs: string[] = []
    for (const [i, sample] of SAMPLES.entries()) refs.push(await sdk.store(`k${i}`, sample.data, sample.type))
    const mine = new ours.FileStorage(d)
    for (const [i, sample] of SAMPLES.entries()) {
      for (const ref of [refs[i]!, basename(refs[i]!)]) {
        const got = await mine.retrieve(ref)
        const expected = await sdk.retrieve(ref)
        expect(Buffer.from(got.content).equals(Buffer.from(sample.data))).toBe(true)
        expect(got.contentType, `sample ${i}`).toBe(expected.contentType)
        expect(got.contentType).toBe(sample.type === undefined ? 'text/plain' : sample.type)
      }
    }
    // and we can keep writing into it without clobbering the SDK's files
    const mineRef = await mine.store('k0', enc('ours'), 'text/csv')
    expect(refs).not.toContain(mineRef)
    expect(new TextDecoder().decode((await new ours.FileStorage(d).retrieve(refs[0]!)).content)).toBe('hello world')
    expect((await new ours.FileStorage(d).retrieve(mineRef)).contentType).toBe('text/csv')
  })

  test('reads a directory written by the SDK plugin through the sandbox', { timeout: T }, async () => {
    const d = dir()
    const drv = new Driven(new sdkOffloader.ContextOffloader({ storage: new sdkOffloader.FileStorage(d), maxResultTokens: 5, previewTokens: 1 }))
    // warm-up: the SDK's first concurrent stores race on loading .metadata.json and can lose
    // content types (an SDK bug); after one offload its metadata is complete.
    await drv.offload([new TextBlock('w'.repeat(100))])
    const res = asJson(
      await drv.offload([new TextBlock('t'.repeat(100)), new JsonBlock({ json: { a: 1 } }), new ImageBlock({ format: 'gif', source: { bytes: rand(5, 9) } })]),
    )
    const refs = [...res.toolResult.content[0].text.matchAll(/^ {2}(\/\S+)/gm)].map((m: any) => m[1])
    expect(refs.length).toBe(3)
    const mine = new ours.FileStorage(d)
    const types = await Promise.all(refs.map(async (r: string) => (await mine.retrieve(r)).contentType))
    expect(types).toEqual(['text/plain', 'application/json', 'image/gif'])
    const fresh = new sdkOffloader.FileStorage(d)
    for (const r of refs) {
      const [x, y] = [await mine.retrieve(r), await fresh.retrieve(r)]
      expect(x.contentType).toBe(y.contentType)
      expect(Buffer.from(x.content).equals(Buffer.from(y.content))).toBe(true)
    }
  })

  test('concurrent stores: 500 at once into one instance, and two instances on one directory', { timeout: T }, async () => {
    const d = dir()
    const s = new ours.FileStorage(d)
    const types = ['text/plain', 'image/png', 'application/json', 'video/mp4', 'text/csv']
    const payload = (i: number) => rand(1 + ((i * 7919) % 3000), i)
    const refs = await Promise.all(Array.from({ length: 500 }, (_, i) => s.store(`k${i % 50}`, payload(i), types[i % 5])))
    expect(new Set(refs).size).toBe(500)
    const a = new ours.FileStorage(d)
    const b = new ours.FileStorage(d)
    const refsAB = await Promise.all(
      Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).store(`ab${i % 10}`, payload(1000 + i), types[i % 5])),
    )
    expect(new Set([...refs, ...refsAB]).size).toBe(900)
    const fresh = new ours.FileStorage(d)
    for (const [i, ref] of refs.entries()) {
      const got = await fresh.retrieve(ref)
      expect(Buffer.from(got.content).equals(Buffer.from(payload(i)))).toBe(true)
      expect(got.contentType).toBe(types[i % 5])
    }
    for (const [i, ref] of refsAB.entries()) {
      const got = await fresh.retrieve(ref)
      expect(Buffer.from(got.content).equals(Buffer.from(payload(1000 + i)))).toBe(true)
      expect(got.contentType).toBe(types[i % 5])
    }
    // no temporary files left behind
    expect(readdirSync(d).filter((f) => /tmp|partial|~$/i.test(f))).toEqual([])
  })

  test('durable option round-trips', { timeout: T }, async () => {
    const d = dir()
    const s = new ours.FileStorage({ artifactDir: d, durable: true })
    const ref = await s.store('k', enc('durable'), 'text/x')
    const got = await new ours.FileStorage(d).retrieve(ref)
    expect(new TextDecoder().decode(got.content)).toBe('durable')
    expect(got.contentType).toBe('text/x')
  })

  test('an empty artifactDir is rejected', () => {
    expect(() => new ours.FileStorage('')).toThrow('FileStorage artifactDir must be a non-empty string')
  })
})

describe('interface compatibility with the SDK plugin', () => {
  for (const kind of ['memory', 'file'] as const) {
    test(`our ${kind} storage inside the SDK's plugin behaves like the SDK's storage`, { timeout: T }, async () => {
      const mk = (lib: any) => (kind === 'memory' ? new lib.InMemoryStorage() : new lib.FileStorage(dir()))
      const a = new Driven(new sdkOffloader.ContextOffloader({ storage: mk(ours), maxResultTokens: 20, previewTokens: 2 }))
      const b = new Driven(new sdkOffloader.ContextOffloader({ storage: mk(sdkOffloader), maxResultTokens: 20, previewTokens: 2 }))
      const log = Array.from({ length: 500 }, (_, i) => `line ${i}${i % 50 === 0 ? ' ERROR' : ''}`).join('\n')
      const content = () => [new TextBlock(log), new ImageBlock({ format: 'png', source: { bytes: rand(100, 7) } })]
      // warm-up (the SDK FileStorage's first concurrent stores race on its metadata load)
      await a.offload([new TextBlock('w'.repeat(100))])
      await b.offload([new TextBlock('w'.repeat(100))])
      const ra = asJson(await a.offload(content()))
      const rb = asJson(await b.offload(content()))
      const norm = (x: any) => JSON.parse(JSON.stringify(x).replace(/\/[^"\s|]*\/\d{13}_(\d+)_/g, '<dir>/<ms>_$1_'))
      expect(norm(ra)).toEqual(norm(rb))
      const refA = ra.toolResult.content[0].text.match(/^ {2}(\S+) \(text/m)[1]
      const refB = rb.toolResult.content[0].text.match(/^ {2}(\S+) \(text/m)[1]
      for (const q of [{ pattern: 'ERROR', context_lines: 1 }, { line_range: { start: 490, end: 600 } }, {}]) {
        const ga = await a.retrieve({ reference: refA, ...q })
        const gb = await b.retrieve({ reference: refB, ...q })
        expect(ga).toEqual(gb)
      }
      expect(textOf(await a.retrieve({ reference: refA, pattern: 'ERROR' }))).toMatch(/^\[10 matches for \/ERROR\/\]/)
    })
  }

  test('a JS-written custom storage inside our plugin behaves as inside the SDK plugin', { timeout: T }, async () => {
    class MapStorage {
      map = new Map<string, { content: Uint8Array; contentType: string }>()
      calls: string[] = []
      async store(key: string, content: Uint8Array, contentType = 'text/plain') {
        this.calls.push(`store ${key} ${contentType} ${content.constructor.name}`)
        const ref = `custom://${this.map.size + 1}/${key}`
        this.map.set(ref, { content: content.slice(), contentType })
        return ref
      }
      async retrieve(reference: string) {
        this.calls.push(`retrieve ${reference}`)
        const e = this.map.get(reference)
        if (!e) throw new Error(`Reference not found: ${reference}`)
        return e
      }
    }
    const sa = new MapStorage()
    const sb = new MapStorage()
    const a = new Driven(new ours.ContextOffloader({ storage: sa, maxResultTokens: 20, previewTokens: 2 }))
    const b = new Driven(new sdkOffloader.ContextOffloader({ storage: sb, maxResultTokens: 20, previewTokens: 2 }))
    const text = Array.from({ length: 300 }, (_, i) => `row ${i} ${i % 30 === 0 ? 'HIT é😀' : ''}`).join('\n')
    const content = () => [new TextBlock(text), new JsonBlock({ json: { hits: [1, 2, 3] } })]
    const ra = asJson(await a.offload(content()))
    const rb = asJson(await b.offload(content()))
    expect(ra).toEqual(rb)
    expect(sa.calls).toEqual(sb.calls)
    for (const input of [
      { reference: 'custom://1/tool-1_0', pattern: 'HIT', context_lines: 0 },
      { reference: 'custom://1/tool-1_0', line_range: { start: 299, end: 300 } },
      { reference: 'custom://2/tool-1_1' },
      { reference: 'custom://2/tool-1_1', pattern: 'hits' },
      { reference: 'custom://9/none', pattern: 'x' },
    ]) {
      expect(await a.retrieve(input)).toEqual(await b.retrieve(input))
    }
    expect(sa.calls).toEqual(sb.calls)
    expect(sa.calls.filter((c) => c.startsWith('store')).length).toBe(2)
  })
})
