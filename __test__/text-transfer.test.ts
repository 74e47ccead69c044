// Strings reach native memory in slices (Latin-1 or UTF-16 copies, encoded to UTF-8 on a
// worker thread). These tests check that the stored bytes are exactly what
// `TextEncoder` produces, including at slice boundaries.
import { describe, expect, it } from 'vitest'
import { AfterToolCallEvent, JsonBlock, TextBlock, ToolResultBlock } from '@strands-agents/sdk'
import * as native from '../binding.cjs'
import { ContextOffloader, InMemoryStorage } from '../index.js'
import { prng } from './helpers/harness'

/** Offloads `text` through the plugin into `storage` and returns the stored bytes. */
async function offloadAndRead(text: string, storage = new InMemoryStorage()): Promise<Uint8Array> {
  const plugin = new ContextOffloader({ storage, maxResultTokens: 10, previewTokens: 1 })
  const hooks = new Map<unknown, (event: unknown) => unknown>()
  const agent = {
    addHook: (event: unknown, cb: (event: unknown) => unknown) => hooks.set(event, cb),
    metrics: { cycleCount: 0 },
    model: { countTokens: async () => 1_000_000 },
  }
  plugin.initAgent(agent as never)
  const event = new AfterToolCallEvent({
    agent: agent as never,
    toolUse: { name: 'big', toolUseId: 'id', input: {} },
    tool: undefined,
    result: new ToolResultBlock({ toolUseId: 'id', status: 'success', content: [new TextBlock(text)] }),
    invocationState: {},
  } as never)
  await hooks.get(AfterToolCallEvent)!(event)
  const preview = (event.result.content[0] as TextBlock).text
  const reference = /\[Stored references:\]\n {2}(\S+)/.exec(preview)?.[1]
  expect(reference).toBe('mem_1_id_0')
  return (await storage.retrieve(reference!)).content
}

/** `SLICE_UNITS` of lib/native.js: the longest slice handed over in one call. */
const SLICE = 1 << 20

describe('string transfer to native memory', () => {
  const cases: Array<[string, () => string]> = [
    ['short ASCII', () => 'hello world, this is long enough to offload'],
    ['Latin-1 only (é, ÿ, NBSP)', () => 'café ÿ\u00a0 '.repeat(50)],
    ['BMP characters (CJK)', () => '日本語のテキスト'.repeat(30)],
    ['emoji', () => '😀 ok '.repeat(40)],
    ['lone surrogates become U+FFFD', () => 'a\ud800b\udc00c' + 'x'.repeat(60) + '\ud83d'],
    [
      'surrogates in every arrangement (high high low, low high, at both ends), the UTF-8 size measured first',
      () => '\udc00\ud800\ud800\udc00\udc00\ud800é'.repeat(40) + '\ud83d\ude00\ud800',
    ],
    ['Latin-1 beyond ASCII at both ends', () => 'ÿ' + 'a\u0080b'.repeat(40) + '\u00ff'],
    ['multi-slice ASCII', () => 'abcdefghij\n'.repeat(Math.ceil((3 * SLICE) / 11))],
    [
      'surrogate pair split exactly at a slice boundary',
      () => 'x'.repeat(SLICE - 1) + '😀' + 'y'.repeat(SLICE) + 'é',
    ],
    ['Latin-1 slice followed by a UTF-16 slice', () => 'é'.repeat(SLICE) + '€'.repeat(SLICE) + 'z'],
    ['UTF-16 slice followed by a Latin-1 slice', () => '€'.repeat(SLICE) + 'é'.repeat(SLICE + 7)],
    ['lone high surrogate at the end of a slice', () => 'x'.repeat(SLICE - 1) + '\ud800' + 'plain'.repeat(10)],
  ]
  for (const [name, make] of cases) {
    it(`stores ${name} exactly as TextEncoder encodes it`, async () => {
      const text = make()
      const stored = await offloadAndRead(text)
      const expected = new TextEncoder().encode(text)
      expect(stored.length).toBe(expected.length)
      expect(Buffer.compare(Buffer.from(stored), Buffer.from(expected))).toBe(0)
    })
  }

  it('stores 300 generated strings exactly as TextEncoder encodes them, short and long, any script', async () => {
    const random = prng(7)
    const pieces = ['a', 'Z', ' ', '\n', 'é', 'ÿ', '\u0080', '€', '日', '한', '😀', '\ud800', '\udfff', '\u2028', '\u0000']
    for (let n = 0; n < 300; n++) {
      const length = n % 50 === 0 ? 131_000 + random.int(0, 2_000) : random.int(20, 3_000)
      let text = ''
      const uniform = random.next() < 0.3 ? random.pick(pieces) : undefined
      while (text.length < length) text += uniform ?? random.pick(pieces)
      const stored = await offloadAndRead(text)
      const expected = new TextEncoder().encode(text)
      expect(Buffer.compare(Buffer.from(stored), Buffer.from(expected)), `case ${n}`).toBe(0)
    }
  })

  // A long text is encoded on a worker thread (see src/utf8.rs). A mostly-ASCII one of at
  // most 1M units is encoded inline instead, its UTF-8 size counted first (to tell whether
  // it may be) and that count used again for the encoding.
  it('stores long texts exactly, whatever stands at their middle and slice boundaries, with or without a byte budget', async () => {
    // Longest text of any script encoded inline (`INLINE_ENCODE_UNITS`, src/store.rs);
    // mostly-ASCII texts are encoded inline up to one slice (`INLINE_MOSTLY_ASCII_UNITS`).
    const ENCODED_INLINE = 128 * 1024
    const random = prng(21)
    const middles = ['😀', '\ud800', '\udc00', '\udc00\ud800', 'é', '€', 'a']
    // Dense scripts (encoded on a worker), and mostly ASCII (encoded inline up to 1M units).
    const fills = ['日本語', '€', 'é€😀', 'abcdefghij日', 'the quick brown fox jumps over the lazy dog € ']
    for (let n = 0; n < 30; n++) {
      // Around the thresholds, at one and at several slices.
      const length = random.pick([ENCODED_INLINE, ENCODED_INLINE + 1, ENCODED_INLINE + 3, SLICE, SLICE + 5, 2 * SLICE + 1, 3 * SLICE - 1])
      const fill = random.pick(fills).repeat(Math.ceil(length / 2))
      const middle = random.pick(middles)
      let text = fill.slice(0, length)
      const at = Math.floor(text.length / 2) - random.int(0, 1)
      text = text.slice(0, at) + middle + text.slice(at + middle.length)
      if (random.next() < 0.5) text = 'x'.repeat(random.int(1, 3)) + text
      const budget = n % 2 === 1
      const storage = budget ? new InMemoryStorage({ maxBytes: 64 * 1024 * 1024 }) : new InMemoryStorage()
      const stored = await offloadAndRead(text, storage)
      const expected = Buffer.from(new TextEncoder().encode(text))
      expect(stored.length, `case ${n}`).toBe(expected.length)
      expect(Buffer.compare(Buffer.from(stored), expected), `case ${n} (${length} units, budget ${budget})`).toBe(0)
    }
  })

  it('stores a 10 MB result and reports its length in the preview', async () => {
    const text = Buffer.alloc(10_000_000, 'log line ERROR 42\n').toString()
    const stored = await offloadAndRead(text)
    expect(stored.length).toBe(10_000_000)
    expect(Buffer.from(stored).toString()).toBe(text)
  })
})

describe('inline stores: the stored length and the reference in one string', () => {
  it('hands back `<bytes>:<reference>`, the reference kept whole whatever the key holds', async () => {
    const random = prng(11)
    const keyPieces = [':', '0', '9', 'k', '_', 'é', '日', '😀', ' ', '::', '12:']
    const textPieces = ['a', ' ', '\n', 'é', 'ÿ', '€', '日', '😀', '\ud800', ':']
    for (let n = 0; n < 200; n++) {
      const store = native.NativeStore.memory(20)
      let key = ''
      for (let i = random.int(1, 12); i > 0; i--) key += random.pick(keyPieces)
      let text = ''
      for (let i = random.int(1, 400); i > 0; i--) text += random.pick(textPieces)
      const latin1 = !/[^\x00-\xff]/.test(text)
      const outcome = latin1 ? store.storeLatin1Now(key, text, 'text/plain') : store.storeUtf16Now(key, text, 'text/plain')
      const bytes = new TextEncoder().encode(text)
      expect(outcome, `case ${n}`).toBe(`${bytes.length}:mem_1_${key}`)
      expect(Buffer.compare((await store.retrieve(`mem_1_${key}`)).content, Buffer.from(bytes)), `case ${n}`).toBe(0)
    }
  })

  it('gives offloads their byte counts and references when keys hold colons and digits', async () => {
    const random = prng(12)
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), maxResultTokens: 10, previewTokens: 1 })
    let bytes = 0
    for (let n = 0; n < 50; n++) {
      const key = `${random.int(0, 99)}:${random.pick(['a', '1:2', ':', 'é:'])}`
      const text = random.pick(['plain text ', 'café ', '日本 ', '😀: ']).repeat(random.int(5, 500))
      const json = { n, text: text.slice(0, 50) }
      const result = await plugin.offload([new TextBlock(text), new JsonBlock({ json })], { key })
      expect(result.references.map((r) => r.reference)).toEqual([`mem_${2 * n + 1}_${key}_0`, `mem_${2 * n + 2}_${key}_1`])
      const jsonBytes = new TextEncoder().encode(JSON.stringify(json, null, 2)).length
      expect(result.references[1]!.description).toBe(`json, ${jsonBytes.toLocaleString()} bytes`)
      bytes += new TextEncoder().encode(text).length + jsonBytes
    }
    expect(plugin.stats().bytesOffloaded).toBe(bytes)
  })
})
