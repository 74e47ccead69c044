/**
 * The result records scenarios return: table rows (one measured case, both sides)
 * and bars (a pass/fail criterion). A side that did not run is `null`; a bar that
 * could not be judged has `pass: null` and is reported as SKIP.
 */

/**
 * A table row. `ratio` is SDK / ours on the medians, so > 1 means ours is faster
 * (or smaller, for memory figures).
 */
export function row(scenario, label, unit, results, extra = {}) {
  const sdk = results.sdk ?? null
  const ours = results.ours ?? null
  const ratio = sdk && ours && ours.median > 0 ? sdk.median / ours.median : null
  return { scenario, case: label, unit, sdk, ours, ratio, ...extra }
}

/** A bar; `pass` is `null` when it could not be judged (e.g. ours not loaded). */
export function bar(scenario, name, pass, detail) {
  return { scenario, name, pass, detail }
}

/** Formats milliseconds with a sensible number of digits. */
export function ms(value) {
  if (value == null || Number.isNaN(value)) return 'n/a'
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`
  if (value >= 100) return `${value.toFixed(0)} ms`
  if (value >= 10) return `${value.toFixed(1)} ms`
  if (value >= 1) return `${value.toFixed(2)} ms`
  return `${(value * 1000).toFixed(1)} µs`
}

/** Formats a ratio as `12.3x`. */
export function times(value) {
  if (value == null || Number.isNaN(value)) return 'n/a'
  return value >= 100 ? `${value.toFixed(0)}x` : value >= 10 ? `${value.toFixed(1)}x` : `${value.toFixed(2)}x`
}
