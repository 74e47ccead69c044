// The benchmark's ratio chart: one bar per measured case on a log scale centred on the
// peer (1), the right length and side for each ratio, and text that is safe in SVG.
import { describe, expect, test } from 'vitest'
import { chartBars, ratioChart } from '../bench/lib/chart.mjs'

const rows = [
  { scenario: 'search', case: "grep 'ERROR' <20 MB> & more", ratio: 10 },
  { scenario: 'search', case: 'cached', ratio: 100 },
  { scenario: 'query', case: 'jq vs JSON.parse', ratio: 0.1 },
  { scenario: 'memory', case: 'no ratio', ratio: null },
  { scenario: 'x', case: 'infinite', ratio: Infinity },
  { scenario: 'x', case: 'even', ratio: 1 },
  { scenario: 'tokens', case: 'estimate vs exact', unit: 'tokens', ratio: 0.5 },
]

describe('bench ratio chart', () => {
  test('log scale: 100x is twice as long as 10x, 1/10 as long as 10x on the other side; only times and sizes', () => {
    const { bars, one } = chartBars(rows)
    expect(bars.map((b) => b.ratio)).toEqual([10, 100, 0.1, 1])
    const len = (b: { from: number; to: number }) => b.to - b.from
    expect(len(bars[1]!)).toBeCloseTo(2 * len(bars[0]!), 6)
    expect(len(bars[2]!)).toBeCloseTo(len(bars[0]!), 6)
    expect(bars[0]!.from).toBeCloseTo(one, 6)
    expect(bars[2]!.to).toBeCloseTo(one, 6)
    expect(bars[2]!.faster).toBe(false)
    expect(len(bars[3]!)).toBe(0)
  })

  test('the scale widens to fit ratios beyond 1/10 and 100x', () => {
    const { low, high } = chartBars([{ scenario: 'a', case: 'b', ratio: 250_000 }, { scenario: 'a', case: 'c', ratio: 0.004 }])
    expect(low).toBe(-3)
    expect(high).toBe(6)
  })

  test('the SVG has one bar per measured case and escapes labels', () => {
    const svg = ratioChart(rows, { title: 'A & B <vs> C', subtitle: 'medians' })
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.trim().endsWith('</svg>')).toBe(true)
    expect(svg.match(/<rect [^>]*fill="#(2f855a|c53030)"/g)).toHaveLength(4)
    expect(svg).toContain('A &amp; B &lt;vs&gt; C')
    expect(svg).toContain('grep &#39;ERROR&#39; &lt;20 MB&gt; &amp; more')
    expect(svg).not.toMatch(/<[^/a-z!?]/)
    expect(svg).toContain('>100x<')
    expect(svg).toContain('>0.10x<')
  })
})
