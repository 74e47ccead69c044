// `headShare`: the share of a head-and-tail preview given to the first lines, through
// the real plugin (`preview: 'headTail'`, and `'structure'` for text that is not JSON),
// its default, its validation, and the native binding's own check.
import { describe, expect, it } from 'vitest'
import { ContextOffloader, InMemoryStorage } from '../index.js'
import { native } from '../lib/native.js'
import { Driven, TextBlock } from './helpers/harness'

const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}: build step ok in ${i % 97} ms`)
const log = lines.join('\n')
const GUIDANCE_END = 'Retrieve full content (omit pattern/line_range) as a last resort.\n\n'

/** The preview section of an offload text (between the guidance and the references). */
function previewSection(text: string): string {
  const start = text.indexOf(GUIDANCE_END) + GUIDANCE_END.length
  return text.slice(start, text.lastIndexOf('\n\n[Stored references:]'))
}

/** The lines shown before and after the omission marker, and the lines it names. */
function split(preview: string): { head: string[]; tail: string[]; first: number; last: number } {
  const shown = preview.split('\n')
  const at = shown.findIndex((line) => line.startsWith('[… '))
  expect(at).toBeGreaterThanOrEqual(0)
  const marker = /^\[… ([\d,]+) lines omitted \(lines ([\d,]+)-([\d,]+)\) …\]$/.exec(shown[at])
  expect(marker).not.toBeNull()
  const [count, first, last] = marker!.slice(1).map((n) => Number(n.replaceAll(',', '')))
  expect(count).toBe(last - first + 1)
  return { head: shown.slice(0, at), tail: shown.slice(at + 1), first, last }
}

/** Offloads the log through a plugin built with `config`; returns the preview section. */
async function previewOf(config: Record<string, unknown>, text = log): Promise<string> {
  const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), previewTokens: 200, ...config }))
  const result = await d.offload([new TextBlock(text)])
  expect(result.content[0].text.startsWith('[Offloaded:')).toBe(true)
  return previewSection(result.content[0].text)
}

/** Checks that the shown lines are the log's first and last lines around the marker. */
function expectExactSides({ head, tail, first, last }: ReturnType<typeof split>) {
  expect(head).toEqual(lines.slice(0, head.length))
  expect(tail).toEqual(lines.slice(lines.length - tail.length))
  expect(first).toBe(head.length + 1)
  expect(last).toBe(lines.length - tail.length)
}

describe('headShare', () => {
  it('gives a low share mostly to the last lines and a high share mostly to the first', async () => {
    const low = split(await previewOf({ preview: 'headTail', headShare: 0.2 }))
    const high = split(await previewOf({ preview: 'headTail', headShare: 0.8 }))
    expectExactSides(low)
    expectExactSides(high)
    expect(low.tail.length).toBeGreaterThanOrEqual(3 * low.head.length)
    expect(high.head.length).toBeGreaterThanOrEqual(3 * high.tail.length)
    expect(high.head.length).toBeGreaterThan(low.head.length)
    expect(low.tail.length).toBeGreaterThan(high.tail.length)
  })

  it('defaults to one half', async () => {
    const byDefault = await previewOf({ preview: 'headTail' })
    expect(await previewOf({ preview: 'headTail', headShare: 0.5 })).toBe(byDefault)
    const { head, tail } = split(byDefault)
    expect(Math.abs(head.length - tail.length)).toBeLessThanOrEqual(1)
    expect(byDefault.length).toBeLessThanOrEqual(800)
  })

  it('follows the share across the range, within the budget', async () => {
    let previousHead = -1
    for (const headShare of [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1]) {
      const preview = await previewOf({ preview: 'headTail', headShare })
      expect(preview.length).toBeLessThanOrEqual(800)
      const sides = split(preview)
      expectExactSides(sides)
      expect(sides.head.length).toBeGreaterThanOrEqual(previousHead)
      previousHead = sides.head.length
    }
  })

  it('0 shows the last lines only and 1 the first lines only, the marker naming the rest', async () => {
    const tailOnly = await previewOf({ preview: 'headTail', headShare: 0 })
    expect(tailOnly.startsWith('[… ')).toBe(true)
    const none = split(tailOnly)
    expect(none.head).toEqual([])
    expect(none.first).toBe(1)
    expectExactSides(none)
    const headOnly = await previewOf({ preview: 'headTail', headShare: 1 })
    expect(headOnly.endsWith(`(lines ${headOnly.split('\n').length}-5,000) …]`)).toBe(true)
    const all = split(headOnly)
    expect(all.tail).toEqual([])
    expectExactSides(all)
  })

  it("applies to structure's head-and-tail preview of text that is not JSON", async () => {
    for (const headShare of [0.2, 0.8]) {
      expect(await previewOf({ preview: 'structure', headShare })).toBe(await previewOf({ preview: 'headTail', headShare }))
    }
  })

  it('applies with a native tokenizer too', async () => {
    const low = split(await previewOf({ preview: 'headTail', tokenizer: 'o200k_base', headShare: 0.2 }))
    const high = split(await previewOf({ preview: 'headTail', tokenizer: 'o200k_base', headShare: 0.8 }))
    expectExactSides(low)
    expectExactSides(high)
    expect(low.tail.length).toBeGreaterThan(2 * low.head.length)
    expect(high.head.length).toBeGreaterThan(2 * high.tail.length)
  })

  it("leaves the 'head' preview alone", async () => {
    const head = await previewOf({})
    expect(await previewOf({ headShare: 0.1 })).toBe(head)
    expect(await previewOf({ preview: 'head', headShare: 1 })).toBe(head)
    expect(head).toBe(log.slice(0, 800))
  })

  it('rejects anything but a number from 0 to 1 with a clear error', () => {
    const message = (got: string) => `headShare must be a number from 0 to 1 (the head's share of a headTail preview), got ${got}`
    const cases: [unknown, string, ErrorConstructor][] = [
      [1.5, 'number 1.5', RangeError],
      [-0.1, 'number -0.1', RangeError],
      [1.0000001, 'number 1.0000001', RangeError],
      [NaN, 'number NaN', RangeError],
      [Infinity, 'number Infinity', RangeError],
      [-Infinity, 'number -Infinity', RangeError],
      ['0.5', "'0.5'", TypeError],
      [null, 'null', TypeError],
      [{}, 'an object', TypeError],
      [[0.5], 'an array', TypeError],
      [1n, 'bigint 1', TypeError],
      [true, 'boolean true', TypeError],
      [Symbol('share'), 'a symbol', TypeError],
      [() => 0.5, 'a function', TypeError],
    ]
    for (const [headShare, got, type] of cases) {
      for (const preview of ['headTail', 'head', undefined]) {
        const build = () => new ContextOffloader({ preview: preview as any, headShare: headShare as any })
        expect(build).toThrow(type)
        expect(build).toThrow(message(got))
      }
    }
    for (const headShare of [0, -0, 0.5, 1, Number.MIN_VALUE, 1 / 3]) {
      expect(() => new ContextOffloader({ preview: 'headTail', headShare })).not.toThrow()
    }
  })

  it('is checked by the native binding as well', async () => {
    for (const headShare of [NaN, -1, 2, Infinity]) {
      const builder = new native.PreviewBuilder()
      expect(() => builder.build({ mode: 'headTail', budget: 100, headShare })).toThrow(
        `invalid head share ${Number.isNaN(headShare) ? 'NaN' : headShare === Infinity ? 'inf' : headShare}: expected a number from 0 to 1`,
      )
    }
    const built = await new native.PreviewBuilder().build({ mode: 'headTail', budget: 100, headShare: 1 })
    expect(built.preview).toBe('')
  })
})
