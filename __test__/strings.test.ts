// What is kept of a tool result after it is offloaded (a preview, a manifest line) must
// not keep the whole result alive on the V8 heap: measured with forced collections.
import { describe, expect, it } from 'vitest'
import { detached } from '../lib/strings.js'
import { headPreview } from '../lib/preview.js'
import { firstLineOf } from '../lib/manifest.js'
import { heapUsed } from './helpers/heap.js'


/** Texts cut, of 20 MB each: holding them all is 160 MB; the runtime itself may hold on to the last one or two. */
const TEXTS = 8

/** Heap growth while `kept` holds what `cut` made of {@link TEXTS} texts of 20 MB. */
function retained(cut: (text: string) => string): { grown: number; kept: string[] } {
  const before = heapUsed()
  const kept: string[] = []
  for (let i = 0; i < TEXTS; i++) {
    const text = JSON.parse(JSON.stringify(`first line ${i} of a long text\n${'q'.repeat(20_000_000)}`)) as string
    kept.push(cut(text))
  }
  return { grown: heapUsed() - before, kept }
}

describe('strings kept after a result is gone', () => {
  it('a plain slice keeps its whole parent (the control)', () => {
    const { grown, kept } = retained((t) => t.slice(0, 4000))
    expect(kept).toHaveLength(TEXTS)
    expect(grown).toBeGreaterThan(140_000_000)
  })

  it('detached, headPreview and firstLineOf keep only what they return', () => {
    for (const cut of [(t: string) => detached(t.slice(0, 4000)), (t: string) => headPreview([t], 1000), (t: string) => firstLineOf(t)]) {
      const { grown, kept } = retained(cut)
      expect(kept.every((k) => k.startsWith('first line'))).toBe(true)
      expect(grown).toBeLessThan(50_000_000)
    }
  })

  it('detached keeps every UTF-16 code unit, lone surrogates included', () => {
    const text = `ab\uD800cd\uDFFF${'é'.repeat(20)}😀`
    expect(detached(text)).toBe(text)
    expect(detached('short')).toBe('short')
  })
})
