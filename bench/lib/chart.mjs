/**
 * A chart of a run's side-by-side ratios as a standalone SVG: one horizontal bar per
 * table row that has a ratio, on a log scale centred on 1 (the peer, usually the SDK),
 * bars to the right where ours is faster or smaller, to the left where it is not.
 */

/** Decades the scale always shows, widened to fit every ratio. */
const MIN_DECADE = -1
const MAX_DECADE = 2

const LABEL_WIDTH = 560
const PLOT_WIDTH = 460
const RIGHT_MARGIN = 70
const ROW_HEIGHT = 20
const TOP = 56
const BOTTOM = 34
const FONT = 'font-family="ui-sans-serif, system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"'

/** Escapes text for SVG. */
function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])
}

/** A label cut to `max` characters. */
function cut(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** A ratio as the chart prints it. */
function ratioText(ratio) {
  if (ratio >= 100) return `${ratio.toFixed(0)}x`
  if (ratio >= 10) return `${ratio.toFixed(1)}x`
  return `${ratio.toFixed(2)}x`
}

/**
 * The bars of a chart: per row with a finite positive ratio, its label and where its
 * bar starts and ends (x from the left of the plot, in pixels).
 * @param {{ scenario: string, case: string, unit?: string, ratio: number | null }[]} rows
 */
export function chartBars(rows) {
  // Times and sizes only: rows in other units (estimate vs exact counts) are not a race.
  const measured = rows.filter(
    (r) => (r.unit === undefined || r.unit === 'ms' || r.unit === 'MB') && typeof r.ratio === 'number' && Number.isFinite(r.ratio) && r.ratio > 0,
  )
  const decades = measured.map((r) => Math.log10(r.ratio))
  const low = Math.min(MIN_DECADE, Math.floor(Math.min(0, ...decades)))
  const high = Math.max(MAX_DECADE, Math.ceil(Math.max(0, ...decades)))
  const x = (decade) => ((decade - low) / (high - low)) * PLOT_WIDTH
  const one = x(0)
  const bars = measured.map((r) => {
    const end = x(Math.log10(r.ratio))
    return { label: `${r.scenario}: ${r.case}`, ratio: r.ratio, from: Math.min(one, end), to: Math.max(one, end), faster: r.ratio >= 1 }
  })
  return { bars, low, high, one, x }
}

/**
 * The SVG text of the chart of `rows`.
 * @param {{ scenario: string, case: string, ratio: number | null }[]} rows
 * @param {{ title: string, subtitle?: string }} options
 */
export function ratioChart(rows, { title, subtitle = '' }) {
  const { bars, low, high, one, x } = chartBars(rows)
  const width = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN
  const height = TOP + bars.length * ROW_HEIGHT + BOTTOM
  const left = LABEL_WIDTH
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600" fill="#111">${escape(title)}</text>`,
    `<text x="12" y="40" fill="#555">${escape(subtitle)}</text>`,
  ]
  for (let decade = low; decade <= high; decade++) {
    const gx = left + x(decade)
    const label = decade === 0 ? '1 (peer)' : decade > 3 ? `1e${decade}x` : decade > 0 ? `${10 ** decade}x` : `1/${10 ** -decade}`
    parts.push(
      `<line x1="${gx.toFixed(1)}" y1="${TOP - 6}" x2="${gx.toFixed(1)}" y2="${height - BOTTOM + 4}" stroke="${decade === 0 ? '#333' : '#ddd'}"/>`,
      `<text x="${gx.toFixed(1)}" y="${height - BOTTOM + 18}" text-anchor="middle" fill="#555">${label}</text>`,
    )
  }
  bars.forEach((bar, i) => {
    const y = TOP + i * ROW_HEIGHT
    const color = bar.faster ? '#2f855a' : '#c53030'
    // Ratios of slower cases go right of the axis, clear of the labels.
    const tx = left + (bar.faster ? bar.to : one) + 4
    parts.push(
      `<text x="${left - 8}" y="${y + 14}" text-anchor="end" fill="#222">${escape(cut(bar.label, 84))}</text>`,
      `<rect x="${(left + bar.from).toFixed(1)}" y="${y + 4}" width="${Math.max(1, bar.to - bar.from).toFixed(1)}" height="${ROW_HEIGHT - 8}" fill="${color}"/>`,
      `<text x="${tx.toFixed(1)}" y="${y + 14}" fill="${color}">${ratioText(bar.ratio)}</text>`,
    )
  })
  parts.push(`<line x1="${(left + one).toFixed(1)}" y1="${TOP - 6}" x2="${(left + one).toFixed(1)}" y2="${height - BOTTOM + 4}" stroke="#333"/>`)
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
