// Failures the command-line tool reports in one line on stderr with exit code 2: what
// the user gave (a missing store, an unknown reference, a bad pattern or duration) and
// what a store refused. Never a stack trace for either.
import { printable } from './terminal.js'

/** A failure caused by the command line or by what it names; exit code 2. */
export class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
  }
}

/**
 * The one line that reports `err`: its message with line breaks folded into spaces and
 * other control characters escaped (see {@link printable}), without the native layer's
 * `\0<cause>` suffix (the cause is appended after a colon instead).
 * @param {unknown} err
 */
export function oneLine(err) {
  const text = String(err?.message ?? err)
  const split = text.lastIndexOf('\u0000')
  const message = split < 0 ? text : `${text.slice(0, split)}${text.slice(split + 1) ? `: ${text.slice(split + 1)}` : ''}`
  return printable(message.replace(/\s*[\r\n]+\s*/g, ' ').trim()) || 'unknown error'
}
