// Option names users misspell: a warning through the SDK's logger for every key of an
// options object that nothing reads, once per key per process, naming the closest known
// option. Never an error: drop-in users pass the SDK's options, and options objects are
// often shared with other code.
import { logger } from './sdk.js'

/** Keys already warned about in this process (`<what>\0<key>`). */
const warned = new Set()

/**
 * Levenshtein distance between two strings, compared case-insensitively (a wrong case
 * costs nothing: `maxresulttokens` is 0 from `maxResultTokens`).
 * @param {string} a
 * @param {string} b
 */
export function editDistance(a, b) {
  a = a.toLowerCase()
  b = b.toLowerCase()
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}

/**
 * The known name closest to `key`, if one is close enough to be a slip (at most a third
 * of the longer name's letters apart, and at least one letter in common per letter off).
 * @param {string} key
 * @param {readonly string[]} known
 */
export function closestName(key, known) {
  let best
  let bestDistance = Infinity
  for (const name of known) {
    const distance = editDistance(key, name)
    if (distance < bestDistance) {
      best = name
      bestDistance = distance
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(Math.max(key.length, best.length) / 3)) ? best : undefined
}

/**
 * Warns (through the SDK's logger, once per key and `what` in this process) about every
 * own enumerable key of `options` that is not in `known`: `unknown option "maxResultToken"
 * (did you mean "maxResultTokens"?)`. `notes` explains keys of the SDK's own classes that
 * ours take in another form. Does nothing for anything but a plain options object.
 * @param {string} what - who takes the options (`ContextOffloader`, `FileStorage`, ...)
 * @param {unknown} options
 * @param {readonly string[]} known
 * @param {Record<string, string>} [notes]
 */
export function warnUnknownOptions(what, options, known, notes = {}) {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const id = `${what}\u0000${key}`
    if (warned.has(id)) continue
    warned.add(id)
    const note = Object.hasOwn(notes, key) ? notes[key] : undefined
    const closest = note === undefined ? closestName(key, known) : undefined
    const advice = note ?? (closest === undefined ? 'it is ignored' : `did you mean "${closest}"?`)
    logger.warn(`${what}: unknown option "${key}" (${advice})`)
  }
}
