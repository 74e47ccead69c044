// Durations (`7d`) and sizes (`1G`) as the command line spells them, and how sizes and
// times are shown to people.
import { UsageError } from './errors.js'

const DURATION_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }
const SIZE_BYTES = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4, tib: 1024 ** 4 }

/**
 * Milliseconds of a duration such as `90s`, `30m`, `12h`, `7d`, `2w` (one number, one
 * unit; fractions allowed: `1.5h`).
 * @param {string} text
 * @param {string} flag - the option, for the error
 */
export function parseDuration(text, flag) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/i.exec(String(text).trim())
  const ms = m ? Number(m[1]) * DURATION_MS[m[2].toLowerCase()] : NaN
  if (!Number.isFinite(ms) || ms <= 0 || ms > Number.MAX_SAFE_INTEGER) {
    throw new UsageError(`${flag}: bad duration '${text}' (expected a positive number and a unit: ms, s, m, h, d or w, e.g. 7d)`)
  }
  return Math.round(ms)
}

/**
 * Bytes of a size such as `500M`, `1G`, `1.5GiB`, `4096` (K, M, G, T are powers of 1024).
 * @param {string} text
 * @param {string} flag - the option, for the error
 */
export function parseSize(text, flag) {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?$/i.exec(String(text).trim())
  const bytes = m ? Number(m[1]) * SIZE_BYTES[(m[2] ?? '').toLowerCase()] : NaN
  if (!Number.isFinite(bytes) || bytes < 0 || bytes > Number.MAX_SAFE_INTEGER) {
    throw new UsageError(`${flag}: bad size '${text}' (expected a number of bytes with an optional unit K, M, G or T, e.g. 1G)`)
  }
  return Math.floor(bytes)
}

/** A line range `A:B` (1-based, inclusive; `A:` runs to the end). */
export function parseLineRange(text, flag = '--lines') {
  const m = /^(\d+):(\d*)$/.exec(String(text).trim())
  const start = m ? Number(m[1]) : NaN
  const end = m && m[2] !== '' ? Number(m[2]) : Number.MAX_SAFE_INTEGER
  if (!Number.isSafeInteger(start) || start < 1 || !Number.isSafeInteger(end) || end < start) {
    throw new UsageError(`${flag}: bad line range '${text}' (expected A:B with 1 <= A <= B, or A: for the rest)`)
  }
  return { start, end }
}

/** A non-negative integer option. */
export function parseCount(text, flag, max = 1_000_000) {
  const n = /^\d+$/.test(String(text).trim()) ? Number(text) : NaN
  if (!Number.isSafeInteger(n) || n > max) throw new UsageError(`${flag}: expected an integer from 0 to ${max}, got '${text}'`)
  return n
}

/** `1.5 MB`-style size for people (powers of 1024, as the options take them). */
export function humanBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB']
  let value = bytes
  let unit = -1
  do {
    value /= 1024
    unit++
  } while (value >= 1024 && unit < units.length - 1)
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`
}

/** The furthest time a JavaScript `Date` holds, in ms either side of the epoch. */
const DATE_LIMIT_MS = 8.64e15

/**
 * ISO 8601 UTC time of milliseconds since the epoch, or `null`. Times beyond what a `Date`
 * holds (a TTL of millions of years is a valid option) are shown as that limit,
 * `+275760-09-13T00:00:00.000Z`.
 */
export function isoTime(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return null
  return new Date(Math.max(-DATE_LIMIT_MS, Math.min(DATE_LIMIT_MS, ms))).toISOString()
}

/** `2026-11-24 19:22:55Z`-style time for tables, `-` when unknown. */
export function shortTime(ms) {
  const iso = isoTime(ms)
  if (!iso) return '-'
  const [date, time] = iso.split('T')
  return `${date} ${time.slice(0, 8)}Z`
}
