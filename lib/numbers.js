// Checks of the numeric options users pass, with errors that say what was expected and
// what was given, so that no NaN, infinity, fraction or out-of-range value reaches the
// native code (where it would be cut, wrapped or refused with a less helpful message).

/** A short description of a value for an error message. */
export function describe(value) {
  if (value === null) return 'null'
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object'
  if (typeof value === 'symbol' || typeof value === 'function') return `a ${typeof value}`
  return `${typeof value} ${String(value)}`
}

/**
 * Throws a TypeError naming `name` when the path `value` has an unpaired surrogate: it
 * has no UTF-8 form, and native code would read each one as U+FFFD, so that two
 * different paths would name one directory.
 * @param {string} value
 * @param {string} name - the option, as the user wrote it
 */
export function checkPathForm(value, name) {
  if (!value.isWellFormed()) throw new TypeError(`${name} must be a well-formed string (it has an unpaired surrogate): ${describe(value)}`)
}

/**
 * Returns `value` when it is a number (not NaN) for which `ok(value)` holds; throws a
 * `TypeError` for a non-number and a `RangeError` otherwise, naming `expected`.
 * @param {string} name - the option, as the user wrote it
 * @param {unknown} value
 * @param {string} expected - e.g. `'a positive integer'`
 * @param {(n: number) => boolean} ok
 * @returns {number}
 */
export function checkNumber(name, value, expected, ok) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be ${expected}, got ${describe(value)}`)
  if (Number.isNaN(value) || !ok(value)) throw new RangeError(`${name} must be ${expected}, got ${describe(value)}`)
  return value
}

/** An integer in `[min, max]`. */
export const integerIn = (min, max) => (n) => Number.isInteger(n) && n >= min && n <= max

/** A finite number in `(0, max]`. */
export const positiveUpTo = (max) => (n) => n > 0 && n <= max

/** Whether the default locale writes numbers as en-US does (`1,234,567.5`), checked once. */
const GROUPS_LIKE_EN_US = (1234567.5).toLocaleString() === '1,234,567.5' && (-1234).toLocaleString() === '-1,234'

/**
 * `n.toLocaleString()` (the default locale, as the SDK writes counts in previews), without
 * the cost of a locale lookup for safe integers where the default locale groups digits as
 * en-US does; any other number or locale goes through `toLocaleString()` itself.
 * @param {number} n
 */
export function localeCount(n) {
  if (!GROUPS_LIKE_EN_US || !Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString()
  const digits = String(n < 0 ? -n : n)
  if (digits.length <= 3) return String(n)
  let out = digits.slice(0, digits.length % 3 || 3)
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`
  return n < 0 ? `-${out}` : out
}
