// Native BPE token counting (OpenAI encodings) on a seeded random corpus, against
// js-tiktoken (an independent JavaScript implementation) and the `tiktoken` package
// (OpenAI's Rust core compiled to WebAssembly).
//
// One known divergence: js-tiktoken runs the pre-tokenizer patterns with
// JavaScript's `\s`, which lacks U+0085 (NEXT LINE) and has U+FEFF (BYTE ORDER
// MARK), while OpenAI's tiktoken, the WebAssembly build and this implementation
// use Unicode's White_Space (U+0085 yes, U+FEFF no). Texts with those two
// characters are compared with the WebAssembly build only.
import { describe, expect, it } from 'vitest'
import { Tiktoken } from 'js-tiktoken/lite'
import o200k from 'js-tiktoken/ranks/o200k_base'
import cl100k from 'js-tiktoken/ranks/cl100k_base'
import { get_encoding } from 'tiktoken'
import * as native from '../binding.cjs'
import { createTokenApi } from '../lib/tokens.js'
import { prng } from './helpers/harness'

type Encoding = 'o200k_base' | 'cl100k_base'

const api = createTokenApi(native)
const ENCODINGS: Encoding[] = ['o200k_base', 'cl100k_base']
const reference: Record<Encoding, Tiktoken> = { o200k_base: new Tiktoken(o200k), cl100k_base: new Tiktoken(cl100k) }

const wasm = { o200k_base: get_encoding('o200k_base'), cl100k_base: get_encoding('cl100k_base') }

/** js-tiktoken's count, with special tokens encoded as ordinary text. */
const jsCount = (text: string, encoding: Encoding) => reference[encoding].encode(text, [], []).length
/** The WebAssembly tiktoken's count (`encode_ordinary`). */
const wasmCount = (text: string, encoding: Encoding) => wasm[encoding].encode_ordinary(text).length

/** Characters on which js-tiktoken's `\s` differs from Unicode White_Space. */
const JS_WHITESPACE_DIVERGENCE = /[\u0085\ufeff]/

/** A seeded pseudo-random generator returning numbers in [0, 1). */
const random = (seed: number) => prng(seed).next

const FRAGMENTS = [
  'the', 'Quick', 'BROWN', 'fox', "it's", "THEY'LL", 'naïve', 'ÉCOLE', 'straße', 'ǅemal',
  '0', '42', '1234567', '3.14', '²', '½', '2024-05-01T12:00:00Z',
  ' ', '  ', '     ', '\t', '\n', '\n\n', '\r\n', '\r', ' \n ', '\u00a0', '\u3000', '\u2028', '\u0085', '\ufeff',
  '.', ',', '!?', '...', '/', '//', '{"a":1}', '[]', '<|endoftext|>', '\ufffd',
  '日本語', 'テキスト', '、', '。', '한국어', '中文，', 'русский', 'Ελληνικά', 'עברית', 'العربية', 'हिन्दी', 'ไทย',
  'e\u0301', '\u0301', '😀', '👍🏽', '👨\u200d👩\u200d👧', '🇫🇷', '🎉',
  '\ud800', '\udc00', '\udbff\udbff', 'a\ud83d', '\ude00b',
]

/** A random text of up to `maxFragments` fragments (lone surrogates included). */
function randomText(next: () => number, maxFragments: number, fragments = FRAGMENTS): string {
  const n = Math.floor(next() * maxFragments)
  let text = ''
  for (let i = 0; i < n; i++) text += fragments[Math.floor(next() * fragments.length)]
  return text
}

/** The fragments on which js-tiktoken agrees with OpenAI's tiktoken. */
const JS_FRAGMENTS = FRAGMENTS.filter((f) => !JS_WHITESPACE_DIVERGENCE.test(f))

/** A mixed text of at least `bytes` UTF-16 units: logs, prose, code, JSON and CJK lines. */
function largeText(bytes: number): string {
  const next = random(7)
  const lines: string[] = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const line = [
      `2024-05-01T12:${String(i % 60).padStart(2, '0')}:00Z INFO worker-${i % 8} GET /api/v1/items/${Math.floor(next() * 1e5)} status=200`,
      `The agent stored result ${i} and replaced it with a preview; 東京は晴れ、気温は${i % 40}度です。`,
      `    fn step_${i}(x: u32) -> u32 { x.wrapping_mul(${i}) ^ 0x${i.toString(16)} }`,
      JSON.stringify({ id: i, tags: ['a', 'b'], ok: next() < 0.5, note: randomText(next, 6, JS_FRAGMENTS) }),
    ][i % 4]
    lines.push(line)
    length += line.length + 1
  }
  return lines.join('\n')
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

describe('ENCODINGS', () => {
  it('lists the supported encodings and cannot be changed', () => {
    expect(api.ENCODINGS).toEqual(['o200k_base', 'cl100k_base'])
    expect(Object.isFrozen(api.ENCODINGS)).toBe(true)
  })
})

describe('countTokens / countTokensSync', () => {
  it('counts the empty string as 0', async () => {
    for (const encoding of ENCODINGS) {
      expect(api.countTokensSync('', encoding)).toBe(0)
      expect(await api.countTokens('', encoding)).toBe(0)
    }
  })

  it('defaults to o200k_base', async () => {
    const text = 'Default encoding: 日本語 and 😀'
    expect(api.countTokensSync(text)).toBe(jsCount(text, 'o200k_base'))
    expect(await api.countTokens(text)).toBe(jsCount(text, 'o200k_base'))
  })

  it('counts special tokens as ordinary text', () => {
    for (const encoding of ENCODINGS) {
      const text = 'a <|endoftext|> b <|endofprompt|>'
      expect(api.countTokensSync(text, encoding)).toBe(jsCount(text, encoding))
      expect(api.countTokensSync('<|endoftext|>', encoding)).toBeGreaterThan(1)
    }
  })

  for (const encoding of ENCODINGS) {
    it(`agrees with js-tiktoken on 400 random texts (${encoding})`, async () => {
      const next = random(encoding === 'o200k_base' ? 1 : 2)
      for (let i = 0; i < 400; i++) {
        const text = randomText(next, 80, JS_FRAGMENTS)
        const expected = jsCount(text, encoding)
        expect(api.countTokensSync(text, encoding), JSON.stringify(text)).toBe(expected)
        expect(await api.countTokens(text, encoding), JSON.stringify(text)).toBe(expected)
      }
    })

    it(`agrees with the WebAssembly tiktoken on 400 random texts (${encoding})`, async () => {
      const next = random(encoding === 'o200k_base' ? 5 : 6)
      for (let i = 0; i < 400; i++) {
        const text = randomText(next, 80)
        const expected = wasmCount(text, encoding)
        expect(api.countTokensSync(text, encoding), JSON.stringify(text)).toBe(expected)
        expect(await api.countTokens(text, encoding), JSON.stringify(text)).toBe(expected)
      }
    })
  }

  it('treats U+0085 and U+FEFF as OpenAI tiktoken does, where js-tiktoken differs', () => {
    for (const encoding of ENCODINGS) {
      for (const text of [' \u0085?', 'a \u0085\u0085 b', ' \ufeff?', 'x\ufeff\ufeff y']) {
        expect(api.countTokensSync(text, encoding)).toBe(wasmCount(text, encoding))
      }
      expect(jsCount(' \u0085?', encoding)).not.toBe(wasmCount(' \u0085?', encoding))
    }
  })

  it('counts lone surrogates as U+FFFD, as js-tiktoken does', () => {
    for (const encoding of ENCODINGS) {
      for (const text of ['\ud800', 'x\udc00y', 'a\ud83d', '\ude00b', '\udbff\udbff 1', '😀\ud83d😀', '\ud800a']) {
        const wellFormed = text.toWellFormed()
        expect(api.countTokensSync(text, encoding)).toBe(api.countTokensSync(wellFormed, encoding))
        expect(api.countTokensSync(text, encoding)).toBe(jsCount(text, encoding))
        expect(api.countTokensSync(text, encoding)).toBe(wasmCount(text, encoding))
        expect(jsCount(text, encoding)).toBe(jsCount(wellFormed, encoding))
      }
    }
  })

  for (const encoding of ENCODINGS) {
    it(`counts a 1.5 MB mixed text (parallel path) exactly (${encoding})`, async () => {
      const text = largeText(1_500_000)
      const expected = jsCount(text, encoding)
      expect(wasmCount(text, encoding)).toBe(expected)
      expect(await api.countTokens(text, encoding)).toBe(expected)
      expect(api.countTokensSync(text, encoding)).toBe(expected)
    })
  }

  it('counts a long whitespace run that defeats the pre-tokenizer regex engine', async () => {
    // 1.2 million spaces: the regex engine gives up on `\s+(?!\S)`; the run is
    // then cut as that alternative would: all spaces but the last, then " x".
    const run = ' '.repeat(1_200_000)
    for (const encoding of ENCODINGS) {
      const whole = await api.countTokens(`a${run}x`, encoding)
      const parts = (await api.countTokens(`a${run.slice(1)}`, encoding)) + (await api.countTokens(' x', encoding))
      expect(whole).toBe(parts)
    }
  })

  it('rejects an unknown encoding with a TypeError listing the encodings', async () => {
    await expect(api.countTokens('text', 'p50k_base' as Encoding)).rejects.toThrow(TypeError)
    await expect(api.countTokens('text', 'p50k_base' as Encoding)).rejects.toThrow(
      "encoding must be one of 'o200k_base', 'cl100k_base', got 'p50k_base'",
    )
    expect(() => api.countTokensSync('text', 'gpt2' as Encoding)).toThrow(TypeError)
    expect(() => api.countTokensSync('text', null as unknown as Encoding)).toThrow(/got null/)
  })

  it('rejects a text that is not a string with a TypeError', async () => {
    for (const bad of [42, null, undefined, { text: 'x' }, ['x'], Buffer.from('x')]) {
      expect(() => api.countTokensSync(bad as unknown as string)).toThrow(TypeError)
      await expect(api.countTokens(bad as unknown as string)).rejects.toThrow(/text must be a string/)
    }
  })

  it('reports unknown encodings from the addon with the core message', async () => {
    const message = "unknown encoding 'p50k_base': expected 'o200k_base' or 'cl100k_base'"
    expect(() => native.countTokensSync('text', 'p50k_base')).toThrow(message)
    await expect(native.countTokens('text', 'p50k_base')).rejects.toThrow(message)
    await expect(native.loadEncoding('p50k_base')).rejects.toThrow(message)
    expect(() => native.maxTokenBytes('p50k_base')).toThrow(message)
    expect(() => native.countTokensUpTo('text', 'p50k_base', 1)).toThrow(message)
    expect(() => native.tokenPrefixLength('text', 'p50k_base', 1)).toThrow(message)
  })
})

describe('loadEncoding / maxTokenBytes', () => {
  it('loads off the event loop and resolves with the longest token length', async () => {
    for (const encoding of ENCODINGS) {
      const longest = await native.loadEncoding(encoding)
      expect(longest).toBe(native.maxTokenBytes(encoding))
      expect(longest).toBeGreaterThanOrEqual(16)
      const text = ' '.repeat(1000)
      expect(api.countTokensSync(text, encoding)).toBeGreaterThanOrEqual(Math.ceil(text.length / longest))
    }
  })
})

describe('countTokensUpTo', () => {
  const text = 'The offload decision only needs to know whether this is over the limit. '.repeat(20)

  for (const encoding of ENCODINGS) {
    it(`is exact up to the limit and a lower bound above it (${encoding})`, async () => {
      const exact = jsCount(text, encoding)
      for (const upTo of [native.countTokensUpTo, native.countTokensUpToAsync]) {
        expect(await upTo(text, encoding, exact)).toEqual({ count: exact, exceeded: false })
        expect(await upTo(text, encoding, exact + 1000)).toEqual({ count: exact, exceeded: false })
        expect(await upTo('', encoding, 0)).toEqual({ count: 0, exceeded: false })
        for (const limit of [0, 1, 10, exact - 1]) {
          const { count, exceeded } = await upTo(text, encoding, limit)
          expect(exceeded).toBe(true)
          expect(count).toBeGreaterThan(limit)
          expect(count).toBeLessThanOrEqual(exact)
        }
      }
    })
  }

  it('decides a 10 MB text against a small limit without counting it all', () => {
    const big = largeText(10_000_000)
    const started = performance.now()
    const { count, exceeded } = native.countTokensUpTo(big, 'o200k_base', 2500)
    const elapsed = performance.now() - started
    expect(exceeded).toBe(true)
    expect(count).toBeGreaterThan(2500)
    expect(count).toBeLessThanOrEqual(api.countTokensSync(big))
    // Converting the string dominates; counting 10 MB would take about a second.
    expect(elapsed).toBeLessThan(250)
  })

  it('rejects limits that are not non-negative integers', async () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      expect(() => native.countTokensUpTo('text', 'o200k_base', bad)).toThrow(/limit must be a non-negative integer/)
      await expect(native.countTokensUpToAsync('text', 'o200k_base', bad)).rejects.toThrow(
        /limit must be a non-negative integer/,
      )
    }
  })
})

describe('tokenPrefixLength', () => {
  for (const encoding of ENCODINGS) {
    it(`returns a prefix within the budget that never splits a surrogate pair (${encoding})`, () => {
      const next = random(encoding === 'o200k_base' ? 3 : 4)
      for (let i = 0; i < 150; i++) {
        const text = randomText(next, 60) + '😀👍🏽🇫🇷'.repeat(Math.floor(next() * 4))
        const total = api.countTokensSync(text, encoding)
        for (const maxTokens of [0, 1, 2, 5, Math.floor(total / 2), total - 1, total, total + 3]) {
          if (maxTokens < 0) continue
          const length = native.tokenPrefixLength(text, encoding, maxTokens)
          expect(length).toBeGreaterThanOrEqual(0)
          expect(length).toBeLessThanOrEqual(text.length)
          expect(isHigh(text.charCodeAt(length - 1)) && isLow(text.charCodeAt(length))).toBe(false)
          const prefix = text.slice(0, length)
          expect(api.countTokensSync(prefix, encoding)).toBeLessThanOrEqual(maxTokens)
          expect(wasmCount(prefix, encoding)).toBeLessThanOrEqual(maxTokens)
          if (maxTokens >= total) expect(length).toBe(text.length)
        }
      }
    })
  }

  it('cuts after whole tokens near the budget', () => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta iota kappa '.repeat(50)
    for (const maxTokens of [1, 7, 100, 499]) {
      const prefix = text.slice(0, native.tokenPrefixLength(text, 'o200k_base', maxTokens))
      expect(api.countTokensSync(prefix)).toBe(maxTokens)
    }
    expect(native.tokenPrefixLength('hello world', 'o200k_base', 1)).toBe(5)
  })

  it('rejects budgets that are not non-negative integers', () => {
    for (const bad of [-1, 0.5, Number.NaN]) {
      expect(() => native.tokenPrefixLength('text', 'o200k_base', bad)).toThrow(/maxTokens must be a non-negative integer/)
    }
  })
})
