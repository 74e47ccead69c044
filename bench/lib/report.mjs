/**
 * Console table, PASS/FAIL lines and the JSON results file.
 */
import { writeFile } from 'node:fs/promises'
import { ms, times } from './results.mjs'

function formatValue(value, unit) {
  if (value == null || Number.isNaN(value)) return 'n/a'
  if (unit === 'ms') return ms(value)
  if (unit === 'MB') return `${value.toFixed(1)} MB`
  if (unit === 'x') return value.toFixed(2)
  return String(value)
}

function note(r) {
  if (r.note) return r.note
  if (r.sameOutput === true) return 'same output'
  if (r.sameOutput === false) return 'OUTPUT DIFFERS'
  return ''
}

/** The comparison table: medians and p90 per side, and SDK/ours on the medians. */
export function formatTable(rows) {
  const header = ['case', 'SDK median', 'SDK p90', 'ours median', 'ours p90', 'SDK/ours', '']
  const lines = rows.map((r) => [
    `${r.scenario}: ${r.case}`,
    formatValue(r.sdk?.median, r.unit),
    formatValue(r.sdk?.p90, r.unit),
    formatValue(r.ours?.median, r.unit),
    formatValue(r.ours?.p90, r.unit),
    r.ratio == null ? '' : times(r.ratio),
    note(r),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  const render = (cells) =>
    cells
      .map((cell, i) => (i === 0 || i === cells.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join('  ')
      .trimEnd()
  const rule = widths.map((w) => '-'.repeat(w)).join('  ').trimEnd()
  return [render(header), rule, ...lines.map(render)].join('\n')
}

/** One PASS / FAIL / SKIP line per bar. */
export function formatBars(bars) {
  return bars
    .map((b) => `${b.pass === true ? 'PASS' : b.pass === false ? 'FAIL' : 'SKIP'}  [${b.scenario}] ${b.name} — ${b.detail}`)
    .join('\n')
}

/** Writes the run's results (including raw samples) as JSON. */
export async function writeResults(path, results) {
  await writeFile(path, JSON.stringify(results, null, 2) + '\n')
}
