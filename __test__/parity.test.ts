// Differential tests: the same inputs through the SDK's ContextOffloader and ours,
// outputs compared for equality (as the JSON the model would see).
import { afterAll, describe, expect, test } from 'vitest'
import { InMemoryStorage as UnifiedInMemoryStorage } from '@strands-agents/sdk/storage'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as ours from '../index.js'
import {
  DocumentBlock,
  Driven,
  ImageBlock,
  JsonBlock,
  TextBlock,
  VideoBlock,
  asJson,
  dropLoneSurrogates,
  hasLoneSurrogate,
  normalizeTimestamps,
  prng,
  sdkOffloader,
  tempDir,
  textOf,
} from './helpers/harness.js'

const T = 120_000
const impls = { sdk: sdkOffloader as any, ours: ours as any }
type Side = 'sdk' | 'ours'
type Kind = 'memory' | 'file' | 'unified' | 'omitted' | 'agentStorage'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

/** Divergences observed and accepted (by category), reported at the end. */
const allowed: Record<string, number> = {}
function noteAllowed(kind: string) {
  allowed[kind] = (allowed[kind] ?? 0) + 1
}
afterAll(() => {
  if (Object.keys(allowed).length) console.log('allowed divergences observed:', allowed)
})

/** The two plugins, one per fake agent, on the same kind of storage. */
class Pair {
  sides: Record<Side, Driven>
  dirs: Record<Side, string | undefined> = { sdk: undefined, ours: undefined }
  constructor(
    public kind: Kind,
    config: any = {},
  ) {
    const make = (side: Side) => {
      const impl = impls[side]
      let storage: any
      let agentStorage: any
      if (kind === 'memory') storage = new impl.InMemoryStorage()
      else if (kind === 'file') {
        const d = tempDir(`co-parity-${side}-`)
        cleanups.push(d.cleanup)
        this.dirs[side] = d.path
        storage = new impl.FileStorage(d.path)
      } else if (kind === 'unified') storage = new UnifiedInMemoryStorage()
      else if (kind === 'agentStorage') agentStorage = new UnifiedInMemoryStorage()
      const plugin = new impl.ContextOffloader(storage ? { ...config, storage } : { ...config })
      return new Driven(plugin, agentStorage)
    }
    this.sides = { sdk: make('sdk'), ours: make('ours') }
  }
  norm(side: Side, x: unknown): any {
    let s = JSON.stringify(x)
    const dir = this.dirs[side]
    if (dir) {
      s = s.split(JSON.stringify(dir).slice(1, -1)).join('<dir>')
      // The SDK's FileStorage numbers the blocks of its first offload in I/O completion order
      // (each store awaits the metadata load), so numbers are only compared in the dedicated
      // reference-format test, after a warm-up offload.
      s = normalizeTimestamps(s).replace(/<ms>_\d+_/g, '<ms>_<n>_')
    }
    return JSON.parse(normalizeTimestamps(s))
  }
  private warmed = false
  /** Offloads the same content through both; returns normalised results and the refs per side. */
  async offload(content: () => any[], opts: any = {}) {
    if (this.kind === 'file' && !this.warmed) {
      // The SDK's FileStorage loses content types when its very first stores run concurrently
      // (each one reloads .metadata.json and replaces the in-memory map: an SDK bug), so each
      // file pair starts with a one-block offload that loads the SDK's metadata.
      this.warmed = true
      await this.offload(() => [new TextBlock('w'.repeat(100_000))], { toolUseId: 'warm' })
    }
    const sdk = asJson(await this.sides.sdk.offload(content(), opts))
    const o = asJson(await this.sides.ours.offload(content(), opts))
    return { sdk: this.norm('sdk', sdk), ours: this.norm('ours', o), refs: { sdk: refsOf(sdk), ours: refsOf(o) } }
  }
  async retrieve(input: (side: Side) => any) {
    const sdk = await this.sides.sdk.retrieve(input('sdk'))
    const o = await this.sides.ours.retrieve(input('ours'))
    return { sdk: this.norm('sdk', sdk), ours: this.norm('ours', o) }
  }
  async beforeModelCall(cycle: number) {
    await this.sides.sdk.beforeModelCall(cycle)
    await this.sides.ours.beforeModelCall(cycle)
  }
}

/** References listed in an offloaded result's preview text. */
function refsOf(resultJson: any): string[] {
  const text: string = resultJson.toolResult.content[0]?.text ?? ''
  const i = text.lastIndexOf('[Stored references:]\n')
  if (i < 0) return []
  return text
    .slice(i + '[Stored references:]\n'.length)
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().replace(/ \(.*$/s, ''))
}

/**
 * Equality, except where the only difference is the SDK cutting a surrogate pair in half
 * (allowed divergence): then ours must be exactly the SDK's output minus the dangling half.
 */
function expectParity(o: any, s: any, label = '') {
  const os = JSON.stringify(o)
  const ss = JSON.stringify(s)
  if (os === ss) return
  const sdkText = JSON.stringify(JSON.parse(ss), (_k, v) => v)
  const lone = /\\ud[89ab][0-9a-f]{2}|\\ud[c-f][0-9a-f]{2}/i.test(sdkText)
  if (lone) {
    const stripped = JSON.parse(ss, (_k, v) => (typeof v === 'string' && hasLoneSurrogate(v) ? dropLoneSurrogates(v) : v))
    expect(o, `${label}: ours must be the SDK output minus the dangling surrogate half`).toEqual(stripped)
    noteAllowed('half surrogate pair cut by the SDK')
    return
  }
  expect(o, label).toEqual(s)
}

const enc = (s: string) => new TextEncoder().encode(s)
const bytes = (n: number, seed = 1) => {
  const r = prng(seed)
  return Uint8Array.from({ length: n }, () => r.int(0, 255))
}

// ---------------------------------------------------------------------------------------------
describe('constructor validation', () => {
  const configs: any[] = [
    {},
    { maxResultTokens: 0 },
    { maxResultTokens: -5 },
    { previewTokens: -1 },
    { maxResultTokens: 100, previewTokens: 100 },
    { maxResultTokens: 100, previewTokens: 101 },
    { maxResultTokens: 100, previewTokens: 99 },
    { maxResultTokens: 100, previewTokens: 0 },
    { maxResultTokens: 1, previewTokens: 0 },
    { previewTokens: 2500 },
    { evictAfterCycles: 0 },
    { evictAfterCycles: -1 },
    { evictAfterCycles: 1.5 },
    { evictAfterCycles: null },
    { evictAfterCycles: 1 },
    { evictAfterCycles: NaN },
    { evictAfterCycles: Infinity },
    { evictAfterCycles: '3' },
    { maxResultTokens: 10.5, previewTokens: 10.4 },
    { includeRetrievalTool: false },
    { includeRetrievalTool: 0 },
  ]
  for (const cfg of configs) {
    test(`same outcome for ${JSON.stringify(cfg, (_k, v) => (Number.isNaN(v) ? 'NaN' : v))}`, () => {
      const outcome = (impl: any) => {
        try {
          const p = new impl.ContextOffloader(cfg)
          return { ok: true, name: p.name, tools: p.getTools().map((t: any) => t.name) }
        } catch (e: any) {
          return { ok: false, type: e.constructor.name, message: e.message }
        }
      }
      // Our messages are the SDK's with the values at fault (and which one is a default)
      // added: `previewTokens (default 1,000) must be less than maxResultTokens (500)`.
      const ours = outcome(impls.ours)
      const sdk = outcome(impls.sdk)
      if (!ours.ok && typeof ours.message === 'string') ours.message = withoutValues(ours.message)
      expect(ours).toEqual(sdk)
    })
  }

  /** An error message of ours without the values it adds to the SDK's. */
  function withoutValues(message: string): string {
    return message
      .replace(/ \((?:default )?-?[\d,.]+(?:e[+-]?\d+)?\)/g, '')
      .replace(/: set previewTokens below .*$/, '')
      .replace(/, got .*$/, '')
  }

  test('our constructor errors name the values at fault, and which one is a default', () => {
    const message = (cfg: any) => {
      try {
        new impls.ours.ContextOffloader(cfg)
        return ''
      } catch (e: any) {
        return e.message
      }
    }
    expect(message({ maxResultTokens: 500 })).toBe('previewTokens (default 1,000) must be less than maxResultTokens (500): set previewTokens below 500 too')
    expect(message({ maxResultTokens: 100, previewTokens: 101 })).toBe('previewTokens (101) must be less than maxResultTokens (100)')
    expect(message({ previewTokens: 2500 })).toBe('previewTokens (2,500) must be less than maxResultTokens (default 2,500)')
    expect(message({ evictAfterCycles: 0 })).toBe('evictAfterCycles must be a positive integer, got number 0 (null disables eviction)')
    expect(message({ maxResultTokens: -5 })).toBe('maxResultTokens must be positive, got -5')
  })

  test('divergence (documented): a NaN maxResultTokens is rejected; the SDK accepts it and never offloads', () => {
    expect(new impls.sdk.ContextOffloader({ maxResultTokens: NaN }).name).toBe('strands:context-offloader')
    expect(() => new impls.ours.ContextOffloader({ maxResultTokens: NaN })).toThrow(
      'maxResultTokens must be a positive number of tokens (or Infinity), got number NaN',
    )
  })

  test('divergence (benign): ours accepts a missing config object, the SDK throws a TypeError', () => {
    expect(() => new impls.sdk.ContextOffloader()).toThrow(TypeError)
    const p = new impls.ours.ContextOffloader()
    expect(p.name).toBe('strands:context-offloader')
  })
})

// ---------------------------------------------------------------------------------------------
describe('retrieval tool metadata', () => {
  test('same name, description and toolSpec', () => {
    const s = new impls.sdk.ContextOffloader({}).getTools()[0]
    const o = new impls.ours.ContextOffloader({}).getTools()[0]
    expect(o.name).toBe('retrieve_offloaded_content')
    expect(o.name).toBe(s.name)
    expect(o.description).toBe(s.description)
    expect(asJson(o.toolSpec)).toEqual(asJson(s.toolSpec))
  })
  test('getTools returns the same tool instance each call, [] without the tool', () => {
    const o = new impls.ours.ContextOffloader({})
    expect(o.getTools()[0]).toBe(o.getTools()[0])
    expect(new impls.ours.ContextOffloader({ includeRetrievalTool: false }).getTools()).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
const ALL_KINDS: Kind[] = ['memory', 'file', 'unified', 'omitted', 'agentStorage']

describe.each(ALL_KINDS)('offloading (%s storage)', (kind) => {
  test('below, exactly at and just above the threshold', { timeout: T }, async () => {
    const pair = new Pair(kind, { maxResultTokens: 100, previewTokens: 10 })
    for (const len of [1, 399, 400]) {
      const r = await pair.offload(() => [new TextBlock('x'.repeat(len))])
      expect(r.ours).toEqual(r.sdk)
      expect(r.ours.toolResult.content[0].text).toBe('x'.repeat(len)) // untouched
    }
    const r = await pair.offload(() => [new TextBlock('y'.repeat(401))])
    expect(r.ours).toEqual(r.sdk)
    expect(r.ours.toolResult.content[0].text).toMatch(/^\[Offloaded: 1 blocks, ~101 tokens\]/)
    // JSON counts chars/2 of the compact serialisation
    const jr = await pair.offload(() => [new JsonBlock({ json: { k: 'z'.repeat(190) } })])
    expect(jr.ours).toEqual(jr.sdk)
  })

  test('default config, text + json + media, references and retrieval of each', { timeout: T }, async () => {
    const pair = new Pair(kind, {})
    const log = Array.from({ length: 2000 }, (_, i) => `line ${i} ${i % 97 === 0 ? 'ERROR boom' : 'ok'}`).join('\n')
    const img = bytes(3000, 2)
    const vid = bytes(5000, 3)
    const pdf = bytes(700, 4)
    const content = () => [
      new TextBlock(log),
      new JsonBlock({ json: { rows: Array.from({ length: 50 }, (_, i) => ({ i, name: `n${i}`, ok: i % 2 === 0 })) } }),
      new ImageBlock({ format: 'png', source: { bytes: img } }),
      new DocumentBlock({ format: 'pdf', name: 'report.pdf', source: { bytes: pdf } }),
      new VideoBlock({ format: 'mp4', source: { bytes: vid } }),
      new TextBlock(''),
      new DocumentBlock({ format: 'md', name: 'notes', source: { text: '# Notes\nline two ünïcødé' } }),
      new DocumentBlock({ format: 'json', name: 'doc-json', source: { text: '{"a": [1, 2, 3]}' } }),
    ]
    const r = await pair.offload(content)
    expect(r.ours).toEqual(r.sdk)
    expect(r.refs.ours.length).toBe(r.refs.sdk.length)
    expect(r.refs.ours.length).toBe(7)
    for (let i = 0; i < r.refs.sdk.length; i++) {
      const full = await pair.retrieve((side) => ({ reference: r.refs[side][i] }))
      expect(full.ours, `full retrieval of ref #${i}`).toEqual(full.sdk)
      const grep = await pair.retrieve((side) => ({ reference: r.refs[side][i], pattern: 'ERROR|name|Notes|a', context_lines: 1 }))
      expect(grep.ours, `grep of ref #${i}`).toEqual(grep.sdk)
      const head = await pair.retrieve((side) => ({ reference: r.refs[side][i], context_lines: 3 }))
      expect(head.ours, `head of ref #${i}`).toEqual(head.sdk)
    }
  })

  test('divergence (documented): URL and S3 sources stay inline, a document of text blocks is stored; the SDK drops them', { timeout: T }, async () => {
    const pair = new Pair(kind, {})
    const url = new ImageBlock({ format: 'jpeg', source: { url: 'https://example.com/a.jpg' } })
    const s3 = new VideoBlock({ format: 'webm', source: { location: { type: 's3', uri: 's3://bucket/v.webm' } } })
    const content = () => [
      new TextBlock('x\n'.repeat(20_000)),
      url,
      s3,
      new DocumentBlock({ format: 'txt', name: 'blocks', source: { content: [{ text: 'inner' }] } }),
    ]
    const r = await pair.offload(content)
    const sdkTexts = r.sdk.toolResult.content.map((b: any) => b.text)
    expect(sdkTexts.slice(1)).toEqual(['[image: jpeg, 0 bytes]', '[video: webm, 0 bytes]', '[document: txt, blocks, 0 bytes]'])
    const ours = r.ours.toolResult.content
    expect(ours[1]).toEqual(JSON.parse(JSON.stringify(url)))
    expect(ours[2]).toEqual(JSON.parse(JSON.stringify(s3)))
    expect(ours[3].text).toMatch(/^\[document: txt, blocks, 5 bytes \| ref: \S+\]$/)
    expect(r.refs.ours.length).toBe(r.refs.sdk.length + 1)
  })

  test('custom maxResultTokens/previewTokens, previewTokens 0, includeRetrievalTool false', { timeout: T }, async () => {
    for (const cfg of [
      { maxResultTokens: 50, previewTokens: 7 },
      { maxResultTokens: 50, previewTokens: 0 },
      { maxResultTokens: 5000, previewTokens: 4999 },
      { maxResultTokens: 20, previewTokens: 3, includeRetrievalTool: false },
    ]) {
      const pair = new Pair(kind, cfg)
      for (const text of ['abc\n'.repeat(100), 'q'.repeat(25_000), 'j\n'.repeat(30_000)]) {
        const r = await pair.offload(() => [new TextBlock(text), new JsonBlock({ json: [text.slice(0, 30)] })])
        expect(r.ours, JSON.stringify(cfg)).toEqual(r.sdk)
      }
      // the retrieval tool's own result: skipped only when the tool is included
      const r = await pair.offload(() => [new TextBlock('R'.repeat(30_000))], { toolName: 'retrieve_offloaded_content' })
      expect(r.ours).toEqual(r.sdk)
      const wasOffloaded = r.ours.toolResult.content[0].text.startsWith('[Offloaded')
      expect(wasOffloaded).toBe(cfg.includeRetrievalTool === false)
      if (cfg.includeRetrievalTool === false) {
        expect(r.ours.toolResult.content[0].text).toContain('use your available tools to access specific data')
      }
    }
  })

  test('error results are never offloaded', { timeout: T }, async () => {
    const pair = new Pair(kind, { maxResultTokens: 10, previewTokens: 1 })
    const r = await pair.offload(() => [new TextBlock('E'.repeat(10_000))], { status: 'error' })
    expect(r.ours).toEqual(r.sdk)
    expect(r.ours.toolResult.content[0].text).toBe('E'.repeat(10_000))
  })

  test('unicode, emoji, CJK, Latin-1, NUL/NEL and lone surrogates', { timeout: T }, async () => {
    const pair = new Pair(kind, { maxResultTokens: 20, previewTokens: 5 })
    const texts = [
      '😀'.repeat(100), // preview of 20 units: 10 whole emoji
      'a' + '😀'.repeat(100), // preview cuts the 10th emoji in half in the SDK
      '中文字符测试'.repeat(50),
      'héllo wörld ÿ ñ \u00a0 \u0085 \u0000 end\n'.repeat(20), // all < U+0100: Latin-1 path
      'mixed é 中 😀 \u{10FFFF} \u{1F468}\u200d\u{1F469}\u200d\u{1F467}\n'.repeat(20),
      'lone high \ud83d here and lone low \ude00 there\n'.repeat(10),
      'x'.repeat(19) + '\ud83d\ude00' + 'tail'.repeat(50), // the pair straddles the preview cut
      '\u0301e\u0301'.repeat(200), // combining marks
    ]
    for (const text of texts) {
      const r = await pair.offload(() => [new TextBlock(text)])
      expectParity(r.ours, r.sdk, `offload of ${JSON.stringify(text.slice(0, 20))}`)
      const full = await pair.retrieve((side) => ({ reference: r.refs[side][0] }))
      expect(full.ours).toEqual(full.sdk)
      const grep = await pair.retrieve((side) => ({ reference: r.refs[side][0], pattern: 'é|中|😀|\\u0000|lone', context_lines: 0 }))
      expectParity(grep.ours, grep.sdk, 'grep')
    }
  })
})

describe('offloading: ordering, huge results and JSON edge cases', () => {
  test('reference numbering with a large first block followed by media (memory)', { timeout: T }, async () => {
    // A text block above the native slice size is copied in slices (with yields) before it
    // is stored; its reference number must still follow block order, as in the SDK.
    const pair = new Pair('memory', {})
    const big = 'big line of text\n'.repeat(70_000) // ~1.2M UTF-16 units
    const r = await pair.offload(() => [
      new TextBlock(big),
      new ImageBlock({ format: 'png', source: { bytes: bytes(10) } }),
      new JsonBlock({ json: { a: big.slice(0, 10) } }),
    ])
    expect(r.refs.sdk).toEqual(['mem_1_tool-1_0', 'mem_2_tool-1_1', 'mem_3_tool-1_2'])
    expect(r.ours).toEqual(r.sdk)
  })

  for (const kind of ['memory', 'file', 'unified'] as Kind[]) {
    test(`10 MB text result (${kind})`, { timeout: T }, async () => {
      const pair = new Pair(kind, {})
      const line = 'INFO 2024-05-01T12:00:00Z worker=7 msg="processing batch" ünï 中 😀\n'
      const big = line.repeat(Math.ceil((10 * 1024 * 1024) / line.length))
      const r = await pair.offload(() => [new TextBlock(big)])
      expect(r.ours).toEqual(r.sdk)
      const q = await pair.retrieve((side) => ({ reference: r.refs[side][0], pattern: 'worker=\\d', context_lines: 0 }))
      expect(q.ours).toEqual(q.sdk)
      const tail = await pair.retrieve((side) => ({ reference: r.refs[side][0], line_range: { start: 150_000, end: 150_010 } }))
      expect(tail.ours).toEqual(tail.sdk)
    })
  }

  test('JSON blocks: undefined json, nested, unicode, numbers (memory)', { timeout: T }, async () => {
    const pair = new Pair('memory', { maxResultTokens: 5, previewTokens: 1 })
    const values: any[] = [
      undefined,
      null,
      'a string that is long enough to be offloaded',
      [1.5, -0, 1e21, 'é😀', { deep: { deeper: [true, false, null] } }],
      { ['k'.repeat(40)]: '\u2028\u2029\u0000' },
    ]
    for (const json of values) {
      const r = await pair.offload(() => [new JsonBlock({ json }), new TextBlock('t'.repeat(30))])
      expect(r.ours, JSON.stringify(json)).toEqual(r.sdk)
      for (let i = 0; i < r.refs.sdk.length; i++) {
        const full = await pair.retrieve((side) => ({ reference: r.refs[side][i] }))
        expect(full.ours).toEqual(full.sdk)
      }
    }
  })
})

// ---------------------------------------------------------------------------------------------
describe('reference formats', () => {
  test('InMemoryStorage: mem_<n>_<key>', { timeout: T }, async () => {
    const pair = new Pair('memory', { maxResultTokens: 5, previewTokens: 1 })
    await pair.offload(() => [new TextBlock('a'.repeat(100))], { toolUseId: 'tooluse_ABC-1' })
    const r = await pair.offload(() => [new TextBlock('b'.repeat(100)), new TextBlock('c'.repeat(100))], {
      toolUseId: 'weird id/../x',
    })
    expect(r.refs.ours).toEqual(['mem_2_weird id/../x_0', 'mem_3_weird id/../x_1'])
    expect(r.ours).toEqual(r.sdk)
  })

  test('FileStorage via the plugin: <dir>/<ms>_<n>_<key><ext>', { timeout: T }, async () => {
    const pair = new Pair('file', { maxResultTokens: 5, previewTokens: 1 })
    // Pair.offload warms file pairs up with a one-block offload (number 1): the SDK numbers the
    // blocks of its first concurrent stores in I/O order, later ones in block order.
    const warm = await pair.offload(() => [new TextBlock('v'.repeat(100))], { toolUseId: 'second' })
    expect(warm.refs.ours.map((x) => normalizeTimestamps(x.replace(pair.dirs.ours!, '<dir>')))).toEqual([
      '<dir>/<ms>_2_second_0.txt',
    ])
    const r = await pair.offload(
      () => [
        new TextBlock('a'.repeat(100)),
        new JsonBlock({ json: { x: 1 } }),
        new ImageBlock({ format: 'png', source: { bytes: bytes(5) } }),
        new DocumentBlock({ format: 'pdf', name: 'n', source: { bytes: bytes(5) } }),
      ],
      { toolUseId: 'id with spaces/../and\\slashes' },
    )
    expect(r.refs.ours.length).toBe(4)
    for (const ref of r.refs.ours) expect(ref.startsWith(pair.dirs.ours + '/')).toBe(true)
    expect(r.refs.ours.map((x) => normalizeTimestamps(x.replace(pair.dirs.ours!, '<dir>')))).toEqual([
      '<dir>/<ms>_3_id_with_spaces___and_slashes_0.txt',
      '<dir>/<ms>_4_id_with_spaces___and_slashes_1.json',
      '<dir>/<ms>_5_id_with_spaces___and_slashes_2.png',
      '<dir>/<ms>_6_id_with_spaces___and_slashes_3.pdf',
    ])
    const exact = (side: Side) => r.refs[side].map((x) => normalizeTimestamps(x.replace(pair.dirs[side]!, '<dir>')))
    expect(exact('ours')).toEqual(exact('sdk'))
    expect(r.ours).toEqual(r.sdk)
  })

  test('unified and omitted storage: references are the keys', { timeout: T }, async () => {
    for (const kind of ['unified', 'omitted', 'agentStorage'] as Kind[]) {
      const pair = new Pair(kind, { maxResultTokens: 5, previewTokens: 1 })
      const r = await pair.offload(() => [new TextBlock('a'.repeat(100)), new JsonBlock({ json: [1] })], {
        toolUseId: 'tu-9',
      })
      expect(r.refs.sdk, kind).toEqual(['tu-9_0', 'tu-9_1'])
      expect(r.ours, kind).toEqual(r.sdk)
    }
  })
})

// ---------------------------------------------------------------------------------------------
describe('eviction after evictAfterCycles', () => {
  for (const kind of ['memory', 'unified', 'omitted'] as Kind[]) {
    for (const evictAfterCycles of [1, 3, null] as Array<number | null>) {
      test(`${kind}, evictAfterCycles=${evictAfterCycles}`, { timeout: T }, async () => {
        const pair = new Pair(kind, { maxResultTokens: 5, previewTokens: 1, evictAfterCycles })
        const trace: any[] = []
        const refs: Record<Side, string[]> = { sdk: [], ours: [] }
        for (let cycle = 0; cycle <= 8; cycle++) {
          await pair.beforeModelCall(cycle)
          if (cycle % 3 === 0) {
            for (const s of ['sdk', 'ours'] as Side[]) pair.sides[s].agent.metrics.cycleCount = cycle
            const r = await pair.offload(() => [new TextBlock(`cycle ${cycle} `.repeat(20))])
            expect(r.ours).toEqual(r.sdk)
            refs.sdk.push(r.refs.sdk[0]!)
            refs.ours.push(r.refs.ours[0]!)
          }
          // touch the first ref on cycle 4 (retrieval refreshes legacy in-memory entries),
          // probe everything on the last cycle
          const probe = cycle === 4 ? [0] : cycle === 8 ? refs.sdk.map((_, i) => i) : []
          for (const i of probe) {
            const q = await pair.retrieve((side) => ({ reference: refs[side][i], line_range: { start: 1, end: 1 } }))
            expect(q.ours, `cycle ${cycle} ref ${i}`).toEqual(q.sdk)
            trace.push(textOf(q.ours).startsWith('Error') ? 'gone' : 'ok')
          }
        }
        if (evictAfterCycles === null) expect(trace.every((t) => t === 'ok')).toBe(true)
        else expect(trace).toContain('gone')
      })
    }
  }
})

// ---------------------------------------------------------------------------------------------
/** Stores the same contents directly into each side's storage; refs are identical (mem_<n>_k<i>). */
async function storedPair(contents: Array<{ data: Uint8Array; type?: string }>, config: any = {}) {
  const pair = new Pair('memory', config)
  const refs: string[] = []
  for (const [i, c] of contents.entries()) {
    const s = await (pair.sides.sdk.plugin as any)._storage.store(`k${i}`, c.data, c.type)
    const o = await (pair.sides.ours.plugin as any)._storage.store(`k${i}`, c.data, c.type)
    expect(o).toBe(s)
    refs.push(s)
  }
  return { pair, refs }
}

/** Runs each query on both sides; collects mismatches (with allowed divergences applied). */
async function compareQueries(pair: Pair, queries: any[], label: string) {
  const mismatches: any[] = []
  for (const q of queries) {
    const r = await pair.retrieve(() => q)
    try {
      expectParity(r.ours, r.sdk, `${label} ${JSON.stringify(q)}`)
    } catch {
      mismatches.push({ q, ours: textOf(r.ours).slice(0, 300), sdk: textOf(r.sdk).slice(0, 300) })
    }
  }
  expect(mismatches.slice(0, 5), `${mismatches.length} mismatches of ${queries.length}`).toEqual([])
}

const LOG = Array.from({ length: 300 }, (_, i) => {
  const lvl = i % 17 === 0 ? 'ERROR' : i % 7 === 0 ? 'WARN ' : 'INFO '
  const extra = i % 23 === 0 ? ' path=/api/v1/items[3] é中😀' : i % 11 === 0 ? '\tid=11 id=11 aa' : ''
  return `2024-01-01T00:${String(i % 60).padStart(2, '0')} ${lvl} request id=${i} took ${(i * 37) % 1000}ms${extra}`
}).join('\n')

const PATTERNS = [
  'ERROR',
  'error',
  'ERROR|WARN',
  '^2024',
  'ms$',
  '\\d{3}ms',
  '\\w+=\\d+',
  '\\s{2}',
  '\\bid\\b',
  '\\Bd=',
  'id(?==1)',
  'id(?!=1)',
  '(?<=id=)1\\d',
  '(?<!id=)1\\d',
  '(\\d)\\1',
  '(?<n>a)\\k<n>',
  '(?i)error',
  'a**',
  '[',
  '(a+)+',
  '(ERROR)+',
  '(\\d+)*x',
  '(?:INFO|DEBUG) ',
  'x'.repeat(250),
  'ERROR' + '.'.repeat(196) + 'zzzzzzzzzz',
  'path=/api',
  '/api/v1/items\\[3\\]',
  'items[3]',
  ']',
  'a]b',
  'ERROR\nWARN',
  'line\r\nbreak',
  '.',
  '',
  '[a-z]+\\]',
  '\\/',
  '\\u00e9',
  '\\p{L}',
  '[\\s\\S]',
  '^$',
  '$',
  '^',
  '\\',
  '(',
  ')',
  '?',
  '*',
  '+',
  '{2}',
  'a{2,}',
  'a{,3}',
  'a{1',
  '{',
  '}',
  '[^a-zA-Z0-9 :=\\-]',
  '\\D+$',
  '\\W',
  '\\S+\\s',
  'é',
  '中',
  '😀',
  '\\x41',
  '\\u{1F600}',
  '\\cA',
  '[\\b]',
  '\\0',
  'x*',
  '\\ ',
  'took \\d+ms$',
  '^.{10,20}$',
  '😀|é',
  '[😀]',
  '\t',
  '\\t',
  '[[]',
  '[]]',
  '[^]',
  '[]',
  '(?:)',
  '(?=)',
  'a|',
  '|',
  '\\8',
  '(a)|\\1b',
  'id=(1|2)(?:0|1)?\\b',
]

describe('retrieval tool: searches', () => {
  test('pattern searches with various context_lines (default budget)', { timeout: T }, async () => {
    const { pair, refs } = await storedPair([{ data: enc(LOG) }])
    const queries: any[] = []
    for (const pattern of PATTERNS)
      for (const context_lines of [undefined, 0, 1, 5, 1_000_000]) queries.push({ reference: refs[0], pattern, context_lines })
    await compareQueries(pair, queries, 'log')
  })

  test('pattern searches within line ranges, and line ranges alone', { timeout: T }, async () => {
    const { pair, refs } = await storedPair([{ data: enc(LOG) }])
    const ranges = [
      { start: 1, end: 1 },
      { start: 1, end: 50 },
      { start: 250, end: 1000 },
      { start: 300, end: 300 },
      { start: 301, end: 400 },
      { start: 500, end: 600 },
      { start: 50, end: 10 },
      { start: 10, end: 10 },
      { start: 1, end: 1_000_000_000 },
    ]
    const queries: any[] = []
    for (const line_range of ranges) {
      queries.push({ reference: refs[0], line_range })
      queries.push({ reference: refs[0], line_range, context_lines: 2 })
      for (const pattern of PATTERNS.slice(0, 30)) queries.push({ reference: refs[0], pattern, line_range, context_lines: 1 })
    }
    await compareQueries(pair, queries, 'ranges')
  })

  test('head mode (only context_lines) and invalid inputs', { timeout: T }, async () => {
    const { pair, refs } = await storedPair([{ data: enc(LOG) }])
    const queries: any[] = [0, 1, 3, 299, 300, 301, 1e9].map((context_lines) => ({ reference: refs[0], context_lines }))
    queries.push(
      { reference: refs[0], context_lines: -1 },
      { reference: refs[0], context_lines: 1.5 },
      { reference: refs[0], line_range: { start: 0, end: 3 } },
      { reference: refs[0], line_range: { start: 2 } },
      { reference: refs[0], pattern: 5 },
      { pattern: 'x' },
      { reference: 'no-such-ref' },
      { reference: 'no-such-ref', pattern: 'x' },
      { reference: '' },
      { reference: refs[0], pattern: '' , context_lines: 0},
    )
    await compareQueries(pair, queries, 'head')
  })

  test('output truncation at a small budget', { timeout: T }, async () => {
    for (const maxResultTokens of [2, 10, 50, 137]) {
      const longLines = Array.from({ length: 60 }, (_, i) => `${i} ` + 'é😀中x'.repeat(i * 3)).join('\n')
      const { pair, refs } = await storedPair([{ data: enc(LOG) }, { data: enc(longLines) }, { data: enc('y'.repeat(5000)) }], {
        maxResultTokens,
        previewTokens: 1,
      })
      const queries: any[] = []
      for (const ref of refs) {
        for (const pattern of ['ERROR', '.', '\\d', 'y', '😀', 'é'])
          for (const context_lines of [0, 2]) queries.push({ reference: ref, pattern, context_lines })
        queries.push({ reference: ref, line_range: { start: 1, end: 100 } }, { reference: ref, context_lines: 40 })
      }
      await compareQueries(pair, queries, `budget ${maxResultTokens}`)
    }
  })

  test('content shapes: empty, CRLF, trailing newline, blank lines, invalid UTF-8, single line', { timeout: T }, async () => {
    const shapes: Uint8Array[] = [
      enc(''),
      enc('\n'),
      enc('\n\n\n'),
      enc('one\r\ntwo\r\nthree\r\n'),
      enc('a\rb\rc'),
      enc('trailing\nnewline\n'),
      enc('no trailing newline'),
      enc('\u2028line sep\u2029para sep\u0085nel'),
      Uint8Array.from([0x61, 0xff, 0xfe, 0x0a, 0xc3, 0x28, 0x0a, 0xe2, 0x82, 0x0a, 0xf0, 0x9f, 0x98]),
      enc('x'.repeat(100_000)),
    ]
    const { pair, refs } = await storedPair(shapes.map((data) => ({ data })))
    const queries: any[] = []
    for (const ref of refs) {
      queries.push({ reference: ref })
      queries.push({ reference: ref, context_lines: 2 })
      queries.push({ reference: ref, line_range: { start: 1, end: 3 } })
      queries.push({ reference: ref, line_range: { start: 2, end: 2 } })
      for (const pattern of ['^$', '$', '\\r$', 'two', '.', '\\uFFFD', '[^\\x00-\\x7f]', 'x{5}', '^'])
        queries.push({ reference: ref, pattern, context_lines: 1 })
    }
    await compareQueries(pair, queries, 'shapes')
  })

  test('content types: binary searched (error), text-like application types, unknown types', { timeout: T }, async () => {
    const types = [
      'image/png',
      'video/mp4',
      'application/pdf',
      'application/octet-stream',
      'application/json',
      'application/xml',
      'application/x-yaml',
      'application/xhtml+xml',
      'text/csv',
      'text/plain; charset=utf-8',
      'weird/type',
      'textual/plain',
      '',
      'image/',
      'application/vnd.a+b',
    ]
    const data = enc('{"a": 1,\n "b": "é"}\nline 3 ERROR\n')
    const { pair, refs } = await storedPair(types.map((type) => ({ data, type })))
    const queries: any[] = []
    for (const ref of refs) {
      queries.push({ reference: ref }, { reference: ref, pattern: 'ERROR' }, { reference: ref, context_lines: 0 })
      queries.push({ reference: ref, line_range: { start: 1, end: 2 } })
    }
    await compareQueries(pair, queries, 'types')
    // invalid JSON under application/json comes back as text in both
    const bad = await storedPair([{ data: enc('{not json'), type: 'application/json' }, { data: bytes(64), type: 'application/json' }])
    await compareQueries(bad.pair, bad.refs.map((reference) => ({ reference })), 'bad json')
  })

  test('astral literal followed by a quantifier (JS non-unicode: it quantifies the low surrogate)', { timeout: T }, async () => {
    const lines = ['a😀', 'a😀😀', 'b', '中', '😀', 'x😁y', '😀\t😀😀😀']
    const { pair, refs } = await storedPair([{ data: enc(lines.join('\n')) }])
    const queries = ['😀+', 'a😀+', '😀{1}', '😀{1,3}', '😀{1,}', '\\S+😀+', '😀+?', '😀{2}', '😀*', '😀?', 'a😀?$', '(?:😀)+', '😀+$', '^😀+\\t'].map(
      (pattern) => ({ reference: refs[0], pattern, context_lines: 0 }),
    )
    await compareQueries(pair, queries, 'astral quantifiers')
  })

  test('200,000-line content', { timeout: T }, async () => {
    const big = Array.from({ length: 200_000 }, (_, i) => `row ${i} value=${(i * 7919) % 100_003}${i % 5000 === 0 ? ' MARK' : ''}`).join('\n')
    const { pair, refs } = await storedPair([{ data: enc(big) }])
    await compareQueries(
      pair,
      [
        { reference: refs[0], pattern: 'MARK' },
        { reference: refs[0], pattern: 'MARK', context_lines: 0 },
        { reference: refs[0], pattern: 'value=1\\d{4}$', context_lines: 0 },
        { reference: refs[0], pattern: 'nothing-matches-this' },
        { reference: refs[0], pattern: '^row 19999\\d ', context_lines: 2 },
        { reference: refs[0], line_range: { start: 199_990, end: 200_100 } },
        { reference: refs[0], line_range: { start: 99_999, end: 100_003 }, pattern: '0' },
        { reference: refs[0], context_lines: 10 },
        { reference: refs[0], pattern: 'row', context_lines: 1 },
      ],
      '200k',
    )
  })

  test('retrieval through our plugin of content in the SDK storages (non-native path)', { timeout: T }, async () => {
    // ours + SDK InMemoryStorage  vs  SDK + SDK InMemoryStorage
    const sdkStore = new impls.sdk.InMemoryStorage()
    const sdkStore2 = new impls.sdk.InMemoryStorage()
    const s = new Driven(new impls.sdk.ContextOffloader({ storage: sdkStore }))
    const o = new Driven(new impls.ours.ContextOffloader({ storage: sdkStore2 }))
    const ref = await sdkStore.store('k', enc(LOG), 'text/plain')
    expect(await sdkStore2.store('k', enc(LOG), 'text/plain')).toBe(ref)
    const mismatches: any[] = []
    for (const pattern of PATTERNS) {
      const q = { reference: ref, pattern, context_lines: 1 }
      const [a, b] = [await s.retrieve(q), await o.retrieve(q)]
      if (JSON.stringify(a) !== JSON.stringify(b)) mismatches.push({ q, ours: textOf(b).slice(0, 200), sdk: textOf(a).slice(0, 200) })
    }
    expect(mismatches).toEqual([])
  })

  test('invoke() returns the same raw values', { timeout: T }, async () => {
    const { pair, refs } = await storedPair([
      { data: enc(LOG) },
      { data: enc('{"a":[1,2]}'), type: 'application/json' },
      { data: bytes(10), type: 'image/gif' },
    ])
    for (const input of [
      { reference: refs[0] },
      { reference: refs[0], pattern: 'ERROR', context_lines: 0 },
      { reference: refs[1] },
      { reference: refs[2] },
      { reference: 'missing' },
    ]) {
      const a = await pair.sides.sdk.invoke(input)
      const b = await pair.sides.ours.invoke(input)
      expect(asJson(b)).toEqual(asJson(a))
      expect(b?.constructor?.name).toBe(a?.constructor?.name)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Random differential cases.
const ALPHABET = ['a', 'a', 'b', 'c', 'A', 'B', '1', '2', ' ', ' ', '\n', '\n', '\n', '-', '.', '_', 'é', '中', '\t', '/', ']', '(', '😀']
const ATOMS = ['a', 'b', 'c', 'A', '1', ' ', '-', '\\.', '.', '\\d', '\\w', '\\s', '\\W', '\\D', '\\S', '[abc]', '[^a]', '[a-c1]', '[^\\s]', 'é', '中', '😀', '\\/', '\\]', '\\(', '_']

function randomText(r: ReturnType<typeof prng>, astral: boolean): string {
  const n = r.int(0, 400)
  let s = ''
  for (let i = 0; i < n; i++) {
    const c = r.pick(ALPHABET)
    s += !astral && c === '😀' ? 'x' : c
  }
  return s
}

function randomPattern(r: ReturnType<typeof prng>, astral: boolean): string {
  const piece = (): string => {
    const roll = r.next()
    let atom: string
    if (roll < 0.12) atom = `(${randomSeq(2)}|${randomSeq(2)})`
    else if (roll < 0.18) atom = `(?:${randomSeq(2)})`
    else atom = r.pick(ATOMS)
    if (!astral && atom === '😀') atom = 'x'
    const q = r.next()
    if (q < 0.1) atom += '*'
    else if (q < 0.2) atom += '+'
    else if (q < 0.27) atom += '?'
    else if (q < 0.32) atom += `{${r.int(0, 2)},${r.int(2, 4)}}`
    else if (q < 0.35) atom += `{${r.int(1, 3)}}`
    return atom
  }
  // groups only contain unquantified atoms (no nested quantifiers: keeps the SDK fast)
  const randomSeq = (max: number) =>
    Array.from({ length: r.int(1, max) }, () => {
      const a = r.pick(ATOMS)
      return !astral && a === '😀' ? 'x' : a
    }).join('')
  let p = ''
  if (r.bool(0.2)) p += '^'
  const len = r.int(1, 4)
  for (let i = 0; i < len; i++) p += piece()
  if (r.bool(0.1)) p += '|' + piece()
  if (r.bool(0.2)) p += '$'
  if (r.bool(0.03)) p += r.pick(['(', '[', '\\', '{', '**'])
  return p
}

/**
 * Oracle for the astral-character divergence: the SDK's own search code with its regexes
 * compiled in unicode mode (`u`, one code point per character) where the pattern allows it.
 * A difference with the SDK is accepted only when ours equals this oracle's answer.
 */
const require = createRequire(import.meta.url)
const sdkSearchPath = join(dirname(require.resolve('@strands-agents/sdk/vended-plugins/context-offloader')), 'search.js')
const oracleDir = tempDir('co-oracle-')
cleanups.push(oracleDir.cleanup)
const oraclePath = join(oracleDir.path, 'search-unicode.mjs')
writeFileSync(
  oraclePath,
  readFileSync(sdkSearchPath, 'utf8')
    .replace(/^\/\/# sourceMappingURL=.*$/m, '')
    .replace(
      'regex = new RegExp(truncated);',
      "regex = (() => { try { return new RegExp(truncated, 'u') } catch { return new RegExp(truncated) } })();",
    )
    .replace(
      "regex = new RegExp(truncated.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&'));",
      () => "regex = new RegExp(truncated.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&'), 'u');",
    ),
)
const oracleSource = readFileSync(oraclePath, 'utf8')
if ((oracleSource.match(/, 'u'\)/g) ?? []).length !== 2) throw new Error('could not build the unicode-mode oracle from the SDK search code')
const oracle: any = await import(oraclePath)
function unicodeOracle(text: string, q: any, maxChars: number): string {
  const contextLines = q.context_lines ?? 5
  const lineRange = q.line_range ?? (!q.pattern ? { start: 1, end: Math.max(1, contextLines) } : undefined)
  return oracle.searchContent(text, { pattern: q.pattern, line_range: lineRange, context_lines: contextLines }, maxChars)
}

describe('random differential cases (seeded)', () => {
  for (const [seed, astral] of [
    [1, false],
    [2, false],
    [3, true],
  ] as Array<[number, boolean]>) {
    test(`seed ${seed}${astral ? ' (with astral characters)' : ''}`, { timeout: T }, async () => {
      const r = prng(seed)
      const texts = Array.from({ length: 60 }, () => randomText(r, astral))
      const budgets = [3, 40, 2500]
      const mismatches: any[] = []
      let compared = 0
      for (const maxResultTokens of budgets) {
        const { pair, refs } = await storedPair(texts.map((t) => ({ data: enc(t) })), { maxResultTokens, previewTokens: 1 })
        for (let i = 0; i < refs.length; i++) {
          for (let k = 0; k < 8; k++) {
            const q: any = { reference: refs[i] }
            const mode = r.next()
            if (mode < 0.75) q.pattern = randomPattern(r, astral)
            if (mode > 0.5 || r.bool(0.3)) {
              const start = r.int(1, 40)
              q.line_range = { start, end: r.bool(0.9) ? start + r.int(0, 40) : r.int(1, start) }
            }
            if (r.bool(0.6)) q.context_lines = r.int(0, 6)
            const res = await pair.retrieve(() => q)
            compared++
            if (JSON.stringify(res.ours) === JSON.stringify(res.sdk)) continue
            try {
              expectParity(res.ours, res.sdk)
              continue
            } catch {}
            if (astral && /[\u{10000}-\u{10FFFF}]/u.test(texts[i]!)) {
              const expected = unicodeOracle(texts[i]!, q, maxResultTokens * 4)
              if (textOf(res.ours) === expected || textOf(res.ours) === dropLoneSurrogates(expected)) {
                noteAllowed('astral character matched by . (two code units in the SDK)')
                continue
              }
              // `😀?` / `😀*` in JS non-unicode mode quantify only the low surrogate: when it is
              // skipped, the next element (`.`, `[^…]`, `\S`…) may match that lone low half.
              // Ours consumes whole code points, so it can differ from both the SDK and the
              // unicode oracle there. (`😀+` / `😀{1}` are NOT covered: those must match.)
              if (/[\u{10000}-\u{10FFFF}](\?|\*|\{0,)/u.test(q.pattern ?? '')) {
                noteAllowed('optional astral literal: JS quantifies its low surrogate only')
                continue
              }
            }
            mismatches.push({ text: texts[i], q, ours: textOf(res.ours).slice(0, 400), sdk: textOf(res.sdk).slice(0, 400) })
          }
        }
      }
      expect(compared).toBeGreaterThan(1000)
      expect(mismatches.slice(0, 3), `${mismatches.length} mismatches of ${compared}`).toEqual([])
    })
  }
})

// ---------------------------------------------------------------------------------------------
describe('allowed divergences', () => {
  test('catastrophic patterns: ours answers fast (never run through the SDK)', { timeout: T }, async () => {
    const lines = [
      'a'.repeat(40),
      'aaaa '.repeat(12) + '!',
      'x'.repeat(35) + 'y',
      'ab'.repeat(30),
    ].join('\n')
    const { pair, refs } = await storedPair([{ data: enc(lines) }])
    const ours = pair.sides.ours
    const cases: Array<[string, RegExp]> = [
      // line 2 ('aaaa aaaa … !') is the catastrophic one for a backtracking engine
      ['^(\\w+\\s?)*$', /^\[3 matches for \/\^\(\\w\+\\s\?\)\*\$\/\]\n\n> 1\| a{40}\n---\n> 3\| x{35}y\n> 4\| (ab){30}$|^Error: /],
      ['(a|aa)*b', /^\[1 match for \/\(a\|aa\)\*b\/\]|^Error: /],
      ['^(a|a)*$', /^\[1 match for \/\^\(a\|a\)\*\$\/\]|^Error: /],
      ['(.*a){12}$', /^\[\d match(es)? for |^Error: /],
      ['^(?=(a|aa)*c)', /^No matches found|^Error: /],
      ['^(a|aa)*\\1c', /^No matches found|^Error: /],
      ['(x|xx)*z', /^No matches found|^Error: /],
    ]
    for (const [pattern, expected] of cases) {
      const t0 = performance.now()
      const out = textOf(await ours.retrieve({ reference: refs[0], pattern, context_lines: 0 }))
      const ms = performance.now() - t0
      expect(out, pattern).toMatch(expected)
      expect(ms, `${pattern} took ${ms}ms`).toBeLessThan(15_000)
      noteAllowed('catastrophic pattern (ours only)')
    }
  })

  test('astral character matched by `.`: the SDK sees two code units', { timeout: T }, async () => {
    const { pair, refs } = await storedPair([{ data: enc('😀\nab\n中') }])
    const s = textOf(await pair.sides.sdk.retrieve({ reference: refs[0], pattern: '^.$', context_lines: 0 }))
    const o = textOf(await pair.sides.ours.retrieve({ reference: refs[0], pattern: '^.$', context_lines: 0 }))
    // The SDK's `^.$` never matches a lone astral character (2 UTF-16 units).
    expect(s).toBe('[1 match for /^.$/]\n\n> 3| 中')
    // Ours: either the SDK's answer or the code-point answer (the emoji line matches too).
    expect([s, '[2 matches for /^.$/]\n\n> 1| 😀\n---\n> 3| 中']).toContain(o)
    if (o !== s) noteAllowed('astral character matched by . (two code units in the SDK)')
  })

  test('half surrogate pairs: SDK cuts a pair in output truncation; ours drops the dangling half', { timeout: T }, async () => {
    // maxChars = 4*2 = 8: body "> 1| 😀😀..." cut at 8 units with no newline → cut inside a pair.
    const { pair, refs } = await storedPair([{ data: enc('😀😀😀😀😀😀😀😀') }], { maxResultTokens: 2, previewTokens: 1 })
    const s = await pair.sides.sdk.retrieve({ reference: refs[0], pattern: '😀', context_lines: 0 })
    const o = await pair.sides.ours.retrieve({ reference: refs[0], pattern: '😀', context_lines: 0 })
    expect(hasLoneSurrogate(textOf(s))).toBe(true)
    expect(textOf(o)).toBe(dropLoneSurrogates(textOf(s)))
  })
})
