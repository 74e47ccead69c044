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
