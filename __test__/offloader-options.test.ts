// The offloader's own options: native tokenizers (early-exit decision, exact and
// estimated header counts, media estimates), preview modes, per-tool control, manual
// offload and the storage-failure fallback.
import { afterAll, describe, expect, it, vi } from 'vitest'
import { Agent } from '@strands-agents/sdk'
import {
  ContextOffloader,
  FileStorage,
  InMemoryStorage,
  countTokens,
  countTokensSync,
  withNativeTokenCounting,
} from '../index.js'
import {
  Driven,
  sdkOffloader,
  ImageBlock,
  JsonBlock,
  ScriptedModel,
  TextBlock,
  DocumentBlock,
  hasLoneSurrogate,
  prng,
  tempDir,
  textTurn,
  toolCallTurn,
} from './helpers/harness'

/** The header line of an offload preview. */
function header(result: any): string {
  return result.content[0].text.split('\n')[0]
}

/** The preview section of an offload text (between the guidance and the references). */
function previewSection(text: string): string {
  const start = text.indexOf('Retrieve full content (omit pattern/line_range) as a last resort.\n\n')
  const end = text.lastIndexOf('\n\n[Stored references:]')
  return text.slice(start + 'Retrieve full content (omit pattern/line_range) as a last resort.\n\n'.length, end)
}

function referencesOf(result: any): string[] {
  const text: string = result.content[0].text
  const lines = text.slice(text.lastIndexOf('[Stored references:]')).split('\n').slice(1)
  return lines.map((line) => line.trim().split(' ')[0])
}

function isOffloaded(result: any): boolean {
  return typeof result.content[0]?.text === 'string' && result.content[0].text.startsWith('[Offloaded:')
}

/** A text with exactly `n` o200k tokens (" word" repeated is one token per repetition). */
function textOfTokens(n: number): string {
  const text = 'word' + ' word'.repeat(n - 1)
  expect(countTokensSync(text, 'o200k_base')).toBe(n)
  return text
}

describe('option validation', () => {
  it('rejects unknown tokenizers, preview modes and storage-error modes with the valid choices', () => {
    expect(() => new ContextOffloader({ tokenizer: 'p50k_base' as any })).toThrow(
      "Unknown tokenizer 'p50k_base': expected one of 'model', 'o200k_base', 'cl100k_base', 'heuristic'",
    )
    expect(() => new ContextOffloader({ preview: 'tail' as any })).toThrow(
      "Unknown preview 'tail': expected one of 'head', 'headTail', 'structure'",
    )
    expect(() => new ContextOffloader({ onStorageError: 'drop' as any })).toThrow(
      "Unknown onStorageError 'drop': expected one of 'keep', 'truncate'",
    )
    expect(() => new ContextOffloader({ neverOffload: 'shell' as any })).toThrow(TypeError)
    expect(() => new ContextOffloader({ shouldOffload: true as any })).toThrow(TypeError)
    expect(() => new ContextOffloader({ exactCountLimit: -1 })).toThrow('exactCountLimit')
  })
})

describe('native tokenizer decision', () => {
  it('offloads exactly when the o200k count passes maxResultTokens, with an exact header', async () => {
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', maxResultTokens: 300, previewTokens: 50 }))
    const at = await d.offload([new TextBlock(textOfTokens(300))])
    expect(isOffloaded(at)).toBe(false)
    const above = await d.offload([new TextBlock(textOfTokens(301))])
    expect(isOffloaded(above)).toBe(true)
    expect(header(above)).toBe('[Offloaded: 1 blocks, 301 tokens]')
  })

  it('differs from the characters/4 heuristic where that guess is wrong', async () => {
    // 2,000 CJK characters: chars/4 says 500 tokens, o200k counts far more.
    const cjk = '日本語のテキストを処理する。'.repeat(143).slice(0, 2000)
    const exact = countTokensSync(cjk, 'o200k_base')
    expect(exact).toBeGreaterThan(600)
    const model = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), maxResultTokens: 600, previewTokens: 50 }))
    expect(isOffloaded(await model.offload([new TextBlock(cjk)]))).toBe(false)
    const native = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', maxResultTokens: 600, previewTokens: 50 }),
    )
    const result = await native.offload([new TextBlock(cjk)])
    expect(header(result)).toBe(`[Offloaded: 1 blocks, ${exact.toLocaleString()} tokens]`)
  })

  it('counts JSON blocks as compact JSON and sums blocks', async () => {
    const json = { items: Array.from({ length: 60 }, (_, i) => ({ id: i, name: `item-${i}` })) }
    const text = 'summary line'
    const expected = countTokensSync(JSON.stringify(json), 'cl100k_base') + countTokensSync(text, 'cl100k_base')
    const d = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'cl100k_base', maxResultTokens: expected - 1, previewTokens: 10 }),
    )
    const result = await d.offload([new TextBlock(text), new JsonBlock({ json })])
    expect(header(result)).toBe(`[Offloaded: 2 blocks, ${expected.toLocaleString()} tokens]`)
    const d2 = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'cl100k_base', maxResultTokens: expected, previewTokens: 10 }),
    )
    expect(isOffloaded(await d2.offload([new TextBlock(text), new JsonBlock({ json })]))).toBe(false)
  })

  it('labels the header count as an estimate above exactCountLimit, exact below it', async () => {
    const random = prng(7).next
    const words = ['alpha', 'beta', 'gamma', 'delta', 'request', 'timeout', '42', 'ERROR', 'ok', '\n']
    const text = Array.from({ length: 60_000 }, () => words[Math.floor(random() * words.length)]).join(' ')
    const exact = await countTokens(text, 'o200k_base')
    const estimated = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', exactCountLimit: 100_000 }),
    )
    const head = header(await estimated.offload([new TextBlock(text)]))
    const figure = Number(/~([\d,]+) tokens/.exec(head)![1].replaceAll(',', ''))
    expect(Math.abs(figure - exact) / exact).toBeLessThan(0.1)
    const exactPlugin = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', exactCountLimit: 1_000_000 }),
    )
    expect(header(await exactPlugin.offload([new TextBlock(text)]))).toBe(
      `[Offloaded: 1 blocks, ${exact.toLocaleString()} tokens]`,
    )
  })

  it('decides on a 5 MB result without encoding it, and still stores every byte', async () => {
    const text = 'x'.repeat(5 * 1024 * 1024)
    const storage = new InMemoryStorage()
    const d = new Driven(new ContextOffloader({ storage, tokenizer: 'o200k_base', exactCountLimit: 0 }))
    const result = await d.offload([new TextBlock(text)])
    expect(header(result)).toMatch(/^\[Offloaded: 1 blocks, ~[\d,]+ tokens\]$/)
    const [ref] = referencesOf(result)
    const stored = await storage.retrieve(ref)
    expect(stored.content.length).toBe(text.length)
  })

  it('counts images, video and documents by the documented estimates (the SDK counts them as zero)', async () => {
    const bytes = new Uint8Array(200 * 1024).map((_, i) => (i * 31) & 0xff)
    const image = new ImageBlock({ format: 'png', source: { bytes } })
    const native = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base' }))
    const result = await native.offload([image])
    expect(isOffloaded(result)).toBe(true)
    expect(header(result)).toBe(`[Offloaded: 1 blocks, ~${Math.ceil(bytes.length / 75).toLocaleString()} tokens]`)
    expect(result.content[1].text).toMatch(/^\[image: png, 204800 bytes \| ref: mem_1_tool-1_0\]$/)
    const sdkLike = new Driven(new ContextOffloader({ storage: new InMemoryStorage() }))
    expect(isOffloaded(await sdkLike.offload([image]))).toBe(false)

    // A PNG header gives dimensions: width x height / 750.
    const png = new Uint8Array(64)
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
    new DataView(png.buffer).setUint32(16, 1920)
    new DataView(png.buffer).setUint32(20, 1080)
    const small = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', maxResultTokens: 2000, previewTokens: 10 }),
    )
    const shot = await small.offload([new ImageBlock({ format: 'png', source: { bytes: png } })])
    expect(header(shot)).toBe(`[Offloaded: 1 blocks, ~${Math.ceil((1920 * 1080) / 750).toLocaleString()} tokens]`)

    const doc = new DocumentBlock({ format: 'txt', name: 'notes', source: { text: textOfTokens(40) } })
    const docs = new Driven(
      new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', maxResultTokens: 39, previewTokens: 10 }),
    )
    expect(header(await docs.offload([doc]))).toBe('[Offloaded: 1 blocks, ~40 tokens]')
  })

  it('uses the local characters/4 rule with tokenizer heuristic (no model call)', async () => {
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'heuristic', maxResultTokens: 100, previewTokens: 10 }))
    const spy = vi.spyOn(d.agent.model, 'countTokens')
    expect(isOffloaded(await d.offload([new TextBlock('a'.repeat(400))]))).toBe(false)
    const result = await d.offload([new TextBlock('a'.repeat(401))])
    expect(header(result)).toBe('[Offloaded: 1 blocks, ~101 tokens]')
    expect(spy).not.toHaveBeenCalled()
  })
})

describe('previews', () => {
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}: status ok latency ${i % 97} ms`)
  const log = lines.join('\n')

  it("headTail shows the first and last lines and names the lines left out", async () => {
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), preview: 'headTail', previewTokens: 200 }))
    const preview = previewSection((await d.offload([new TextBlock(log)])).content[0].text)
    expect(preview.length).toBeLessThanOrEqual(800)
    expect(preview.startsWith('line 1: status ok')).toBe(true)
    expect(preview.endsWith(lines[4999])).toBe(true)
    const marker = /lines omitted \(lines ([\d,]+)-([\d,]+)\)/.exec(preview)
    expect(marker).not.toBeNull()
    const first = Number(marker![1].replaceAll(',', ''))
    const last = Number(marker![2].replaceAll(',', ''))
    // Every line outside the omitted span is shown whole, in order.
    expect(preview).toContain(lines[first - 2])
    expect(preview).toContain(lines[last])
    expect(preview).not.toContain(`${lines[first - 1]}\n`)
  })

  it('structure outlines a JSON block with keys, types and array lengths', async () => {
    const json = {
      users: Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `user-${i}`, active: i % 2 === 0 })),
      total: 2000,
      next: null,
    }
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), preview: 'structure', previewTokens: 300 }))
    const preview = previewSection((await d.offload([new JsonBlock({ json })])).content[0].text)
    expect(preview.length).toBeLessThanOrEqual(1200)
    for (const part of ['"users"', '2,000', '"id"', '"name"', '"active"', '"total"', '"next"', 'null']) {
      expect(preview).toContain(part)
    }
  })

  it('structure falls back to headTail for text that is not JSON', async () => {
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), preview: 'structure', previewTokens: 200 }))
    const preview = previewSection((await d.offload([new TextBlock(log)])).content[0].text)
    expect(preview).toMatch(/lines omitted/)
    expect(preview.startsWith('line 1:')).toBe(true)
  })

  it('cuts a native-tokenizer preview at a token boundary without splitting characters', async () => {
    const random = prng(11).next
    const pieces = ['日本語', '😀', 'é', 'naïve', ' ', '\n', 'data', '𝔘𝔫𝔦', '한국어', '—']
    const text = Array.from({ length: 20_000 }, () => pieces[Math.floor(random() * pieces.length)]).join('')
    for (const previewTokens of [1, 7, 100, 999]) {
      const d = new Driven(
        new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base', previewTokens, maxResultTokens: 1000 }),
      )
      const preview = previewSection((await d.offload([new TextBlock(text)])).content[0].text)
      expect(hasLoneSurrogate(preview)).toBe(false)
      expect(countTokensSync(preview, 'o200k_base')).toBeLessThanOrEqual(previewTokens)
      if (previewTokens >= 100) expect(countTokensSync(preview, 'o200k_base')).toBeGreaterThan(previewTokens * 0.8)
    }
  })

  it('cuts one over-long line with a marker so the lines after it still show', async () => {
    const text = ['first line', 'y'.repeat(5 * 1024 * 1024), 'third line', 'fourth line'].join('\n')
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer: 'o200k_base' }))
    const preview = previewSection((await d.offload([new TextBlock(text)])).content[0].text)
    expect(preview.startsWith('first line\nyyyy')).toBe(true)
    expect(preview).toMatch(/…/)
    expect(preview).toContain('third line')
    expect(preview).toContain('fourth line')
  })

  it('keeps the SDK preview (first previewTokens x 4 characters) by default', async () => {
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), previewTokens: 100, maxResultTokens: 200 }))
    const preview = previewSection((await d.offload([new TextBlock(log)])).content[0].text)
    expect(preview).toBe(log.slice(0, 400))
  })
})

describe('storing natively previewed blocks', () => {
  const random = prng(3).next
  const text = Array.from({ length: 40_000 }, (_, i) => `${i} ${random() < 0.1 ? '日本語 😀' : 'ascii'} line`).join('\n')
  const json = { rows: Array.from({ length: 3000 }, (_, i) => ({ i, label: `é-${i}` })) }
  const dirs: Array<{ cleanup: () => void }> = []
  afterAll(() => dirs.forEach((dir) => dir.cleanup()))
  const fileStorage = () => {
    const dir = tempDir()
    dirs.push(dir)
    return new FileStorage(dir.path)
  }

  it.each([
    ['FileStorage', fileStorage],
    ['InMemoryStorage', () => new InMemoryStorage()],
    ["the SDK's InMemoryStorage", () => new sdkOffloader.InMemoryStorage()],
  ])('stores every byte in %s (text and pretty-printed JSON)', async (_name, make) => {
    const storage: any = make()
    const d = new Driven(new ContextOffloader({ storage, tokenizer: 'cl100k_base', preview: 'structure' }))
    const result = await d.offload([new TextBlock(text), new JsonBlock({ json })])
    const [textRef, jsonRef] = referencesOf(result)
    const storedText = await storage.retrieve(textRef)
    expect(storedText.contentType).toBe('text/plain')
    expect(new TextDecoder().decode(storedText.content)).toBe(text)
    const storedJson = await storage.retrieve(jsonRef)
    expect(storedJson.contentType).toBe('application/json')
    expect(new TextDecoder().decode(storedJson.content)).toBe(JSON.stringify(json, null, 2))
    const lineHit = await d.invoke({ reference: jsonRef, pattern: '"label": "é-2999"', context_lines: 0 })
    expect(lineHit).toContain('é-2999')
  })
})

describe('per-tool control', () => {
  const big = 'z '.repeat(20_000)

  it('neverOffload and shouldOffload decide per call', async () => {
    const calls: any[] = []
    const d = new Driven(
      new ContextOffloader({
        storage: new InMemoryStorage(),
        neverOffload: ['parse_me'],
        shouldOffload: (toolUse, result) => {
          calls.push([toolUse.name, result.toolUseId])
          if (toolUse.name === 'always') return true
          if (toolUse.name === 'never') return false
          return undefined
        },
      }),
    )
    expect(isOffloaded(await d.offload([new TextBlock(big)], { toolName: 'parse_me' }))).toBe(false)
    expect(isOffloaded(await d.offload([new TextBlock(big)], { toolName: 'never' }))).toBe(false)
    expect(isOffloaded(await d.offload([new TextBlock(big)], { toolName: 'other' }))).toBe(true)
    expect(isOffloaded(await d.offload([new TextBlock('tiny')], { toolName: 'other' }))).toBe(false)
    const forced = await d.offload([new TextBlock('tiny')], { toolName: 'always' })
    expect(isOffloaded(forced)).toBe(true)
    expect(previewSection(forced.content[0].text)).toBe('tiny')
    // neverOffload is checked first: shouldOffload is not asked for it.
    expect(calls.map((c) => c[0])).toEqual(['never', 'other', 'other', 'always'])
  })

  it('a throwing shouldOffload falls back to the size rule', async () => {
    const d = new Driven(
      new ContextOffloader({
        storage: new InMemoryStorage(),
        shouldOffload: () => {
          throw new Error('bug in callback')
        },
      }),
    )
    expect(isOffloaded(await d.offload([new TextBlock(big)]))).toBe(true)
    expect(isOffloaded(await d.offload([new TextBlock('tiny')]))).toBe(false)
  })
})

describe('manual offload', () => {
  it('returns the preview text and references, retrievable with the tool', async () => {
    const plugin = new ContextOffloader({ storage: new InMemoryStorage(), previewTokens: 20 })
    const d = new Driven(plugin)
    const input = Array.from({ length: 300 }, (_, i) => `user input line ${i}`).join('\n')
    const result = await plugin.offload(input, { key: 'upload-1' })
    expect(result.references).toEqual([
      { reference: 'mem_1_upload-1_0', contentType: 'text/plain', description: `text, ${input.length.toLocaleString()} chars` },
    ])
    expect(result.text.startsWith('[Offloaded: 1 blocks, ~')).toBe(true)
    expect(result.text).toContain(input.slice(0, 80))
    expect(result.content).toHaveLength(1)
    expect(result.truncated).toBe(false)
    const found = await d.invoke({ reference: 'mem_1_upload-1_0', pattern: 'line 250$', context_lines: 0 })
    expect(found).toContain('user input line 250')
  })

  it('works before the plugin joins an agent when a storage is configured, and explains otherwise', async () => {
    const dir = tempDir()
    try {
      const plugin = new ContextOffloader({ storage: new FileStorage(dir.path), tokenizer: 'o200k_base' })
      const result = await plugin.offload([new TextBlock('hello world'), new JsonBlock({ json: { a: [1, 2] } })], { key: 'doc' })
      expect(result.references.map((r) => r.contentType)).toEqual(['text/plain', 'application/json'])
      expect(result.tokens).toBe(countTokensSync('hello world') + countTokensSync('{"a":[1,2]}'))
      expect(result.approximate).toBe(false)
      await expect(new ContextOffloader().offload('x', { key: 'k' })).rejects.toThrow('needs a storage')
      await expect(plugin.offload('x', { key: '' } as any)).rejects.toThrow(TypeError)
      await expect(plugin.offload([{ nope: 1 }] as any, { key: 'bad' })).rejects.toThrow('offload() content must be')
      const data = await plugin.offload([{ text: 'from data' }, { json: { b: 2 } }] as any, { key: 'data' })
      expect(data.references.map((r) => r.contentType)).toEqual(['text/plain', 'application/json'])
    } finally {
      dir.cleanup()
    }
  })
})

describe('storage failures', () => {
  const failing = {
    store: async () => {
      throw new Error('disk quota exceeded')
    },
    retrieve: async (reference: string) => {
      throw new Error(`Reference not found: ${reference}`)
    },
  }
  const big = Array.from({ length: 4000 }, (_, i) => `row ${i}`).join('\n')

  it("'keep' keeps the whole result (the SDK's behaviour)", async () => {
    const d = new Driven(new ContextOffloader({ storage: failing }))
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const result = await d.offload([new TextBlock(big)])
      expect(result.content[0].text).toBe(big)
    } finally {
      warn.mockRestore()
    }
  })

  it("'truncate' keeps only the preview, with a marker giving the reason", async () => {
    const d = new Driven(new ContextOffloader({ storage: failing, onStorageError: 'truncate', previewTokens: 50 }))
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const result = await d.offload([new TextBlock(big), new ImageBlock({ format: 'png', source: { bytes: new Uint8Array(10) } })])
      const text: string = result.content[0].text
      expect(text.startsWith('[Truncated: 2 blocks, ~')).toBe(true)
      expect(text).toContain('disk quota exceeded')
      expect(text).toContain('cannot be retrieved')
      expect(text.endsWith(big.slice(0, 200))).toBe(true)
      expect(result.content[1].text).toBe('[image: png, 10 bytes | dropped]')
    } finally {
      warn.mockRestore()
    }
  })
})

describe('token counting for SDK models', () => {
  it('countTokens matches known o200k and cl100k counts', async () => {
    expect(await countTokens('hello world')).toBe(2)
    expect(await countTokens('tiktoken is great!', 'cl100k_base')).toBe(6)
    await expect(countTokens('x', 'gpt2' as any)).rejects.toThrow(/o200k_base/)
  })

  it('withNativeTokenCounting gives a model exact counts, used by a real Agent', async () => {
    const model = withNativeTokenCounting(
      new ScriptedModel([(m) => toolCallTurn('big_tool', 't1', {}), () => textTurn('done')]),
      'o200k_base',
    )
    const messages = [{ role: 'user', content: [new TextBlock('日本語のテキスト hello world')] }] as any
    expect(await model.countTokens(messages)).toBe(countTokensSync('日本語のテキスト hello world'))
    const cjk = '数据处理完成。'.repeat(400)
    const { tool } = await import('@strands-agents/sdk')
    const { z } = await import('zod')
    const bigTool = tool({ name: 'big_tool', description: 'big', inputSchema: z.object({}), callback: () => cjk })
    const agent = new Agent({
      model,
      printer: false,
      tools: [bigTool],
      plugins: [new ContextOffloader({ storage: new InMemoryStorage(), maxResultTokens: 1000, previewTokens: 100 })],
    })
    await agent.invoke('go')
    // chars/4 says 700 tokens (kept); o200k counts more than 1,000, so it was offloaded.
    const sent = JSON.stringify((model as any).seen[1])
    expect(countTokensSync(cjk)).toBeGreaterThan(1000)
    expect(sent).toContain('[Offloaded: 1 blocks, ~')
  })
})

describe("the model's count decides, whatever shape it answers in", () => {
  /** A plugin on a fake agent whose model counts with `countTokens`. */
  function drivenWith(countTokens: () => unknown) {
    const driven = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), maxResultTokens: 100, previewTokens: 10 }))
    ;(driven.agent.model as any).countTokens = countTokens
    return driven
  }

  it('a number, a promise, a thrown error and a rejection, as with the SDK', async () => {
    const text = 'some tool output\n'.repeat(10)
    for (const [name, count, offloaded] of [
      ['a number', () => 5000, true],
      ['a promise', async () => 5000, true],
      ['a small number', () => 10, false],
      ['a small promise', async () => 10, false],
    ] as const) {
      const result = await drivenWith(count).offload([new TextBlock(text)])
      expect(result.content[0].text.startsWith('[Offloaded: 1 blocks, ~5,000 tokens]'), name).toBe(offloaded)
      if (!offloaded) expect(result.content[0].text, name).toBe(text)
    }
    for (const [name, count] of [
      ['a thrown error', () => {
        throw new Error('count failed')
      }],
      ['a rejection', async () => {
        throw new Error('count failed')
      }],
    ] as const) {
      await expect(drivenWith(count).offload([new TextBlock(text)]), name).rejects.toThrow('count failed')
    }
  })
})
