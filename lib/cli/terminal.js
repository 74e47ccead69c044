// What the tool writes where: results on stdout (buffered in large chunks, so 100,000
// lines cost a few writes), messages and progress on stderr. Colour only on a terminal
// and never when NO_COLOR is set (https://no-color.org); a progress bar (cli-progress)
// only when stderr is a terminal (and only then is cli-progress loaded: it costs more
// start-up time than a whole grep of a small artifact).

/** Whether `stream` may carry colour: a terminal, and NO_COLOR unset or empty. */
export function colourOn(stream, env = process.env) {
  return Boolean(stream?.isTTY) && !env.NO_COLOR
}

/** ANSI styles that vanish when colour is off. */
export function styles(on) {
  const wrap = (open, close) => (text) => (on ? `\u001b[${open}m${text}\u001b[${close}m` : String(text))
  return { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), yellow: wrap(33, 39) }
}

/** Collects output and writes it to stdout in chunks of about 1 MB. */
export class Output {
  constructor(stream = process.stdout) {
    this.stream = stream
    this.parts = []
    this.size = 0
  }

  /** Appends `text` and a line break. */
  line(text = '') {
    this.write(`${text}\n`)
  }

  /** Appends `text` as it is. */
  write(text) {
    this.parts.push(text)
    this.size += text.length
    if (this.size >= 1 << 20) this.flush()
  }

  /** Writes what was collected. */
  flush() {
    if (this.parts.length === 0) return
    this.stream.write(this.parts.join(''))
    this.parts = []
    this.size = 0
  }

  /** Flushes and resolves once stdout has taken everything (before the process exits). */
  async end() {
    this.flush()
    await new Promise((resolve) => this.stream.write('', () => resolve()))
  }
}

/**
 * Rows as aligned columns (two spaces apart; the last column is not padded), with an
 * optional header styled by `style`.
 * @param {string[]} header
 * @param {string[][]} rows
 * @param {(text: string) => string} [style]
 */
export function table(header, rows, style = (t) => t) {
  rows = rows.map((row) => row.map((cell) => printable(String(cell))))
  const widths = header.map((h, i) => rows.reduce((w, row) => Math.max(w, String(row[i]).length), h.length))
  const render = (cells) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? String(cell) : String(cell).padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  return [style(render(header)), ...rows.map(render)]
}

/** Control characters (C0, DEL, C1) and bidirectional overrides, which would move or recolour a terminal. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/**
 * `text` with every control character and bidirectional override written as `\xNN` or
 * `\uNNNN`, so that names taken from a store (references, session ids) or from the command
 * line cannot drive the terminal they are printed on.
 * @param {string} text
 */
export function printable(text) {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0)
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

/**
 * A progress bar for `total` steps labelled `what`, drawn on stderr only when stderr is
 * a terminal; otherwise an object whose methods do nothing. Resolves with the bar. With
 * `total` Infinity (a count whose end is unknown: the pages of a listing), a counter of
 * `unit` and pages instead of a bar.
 * @param {string} what
 * @param {number} total
 * @param {{ stream?: NodeJS.WriteStream, env?: NodeJS.ProcessEnv, unit?: string }} [where]
 */
export async function progress(what, total, { stream = process.stderr, env = process.env, unit = '' } = {}) {
  if (!stream.isTTY || total <= 0) return { increment() {}, update() {}, stop() {} }
  const { default: cliProgress } = await import('cli-progress')
  const colour = colourOn(stream, env)
  const open = total === Infinity
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: open
        ? `${what}: {value} ${unit}, {pages} pages | {duration_formatted}`
        : `${what} ${colour ? '\u001b[36m{bar}\u001b[39m' : '{bar}'} {percentage}% | {value}/{total} | {duration_formatted}`,
      barCompleteChar: '#',
      barIncompleteChar: colour ? '\u2591' : '-',
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
      fps: 10,
    },
    cliProgress.Presets.legacy,
  )
  bar.start(open ? 0 : total, 0, open ? { pages: 0 } : undefined)
  return {
    increment(n = 1) {
      bar.increment(n)
    },
    update(value, payload) {
      bar.update(value, payload)
    },
    stop() {
      bar.stop()
    },
  }
}
