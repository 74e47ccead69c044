// MCP's stdio framing (one JSON-RPC message per line) over any pair of streams, read in
// linear time. The SDK's own reader concatenates every chunk onto what it holds and
// rescans it for a line break, which makes a 100 MB message take minutes, and it stops
// at 10 MiB; this one keeps the chunks of an unfinished line apart, looks for the break
// in the new chunk only, and joins them once. Used for the proxy's own stdin/stdout and
// for an upstream server's pipes (./child-transport.js).
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'

/** The largest message read by default: 1 GiB (a longer line is an error, and skipped). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 * 1024

const NEWLINE = 0x0a

/**
 * The SDK's `Transport` over a readable and a writable stream of newline-delimited
 * JSON-RPC. A line that is not a JSON-RPC message is reported to `onerror` and skipped
 * (the stream stays usable); the end of the input closes the transport.
 */
export class LineTransport {
  /** Chunks of the line being read (its break not seen yet). */
  #pending = []
  #pendingBytes = 0
  /** Whether the rest of an over-long line is being skipped. */
  #skipping = false
  #started = false
  #closed = false
  #input
  #output
  #maxMessageBytes
  #listeners = []

  /**
   * @param {NodeJS.ReadableStream} input - where messages are read from
   * @param {NodeJS.WritableStream} output - where messages are written
   * @param {{ maxMessageBytes?: number }} [options]
   */
  constructor(input, output, options = {}) {
    this.#input = input
    this.#output = output
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    /** @type {((message: object) => void) | undefined} */
    this.onmessage = undefined
    /** @type {((error: Error) => void) | undefined} */
    this.onerror = undefined
    /** @type {(() => void) | undefined} */
    this.onclose = undefined
  }

  /** Starts reading. */
  async start() {
    if (this.#started) throw new Error('LineTransport already started')
    this.#started = true
    this.#listen(this.#input, 'data', (chunk) => this.#read(chunk))
    this.#listen(this.#input, 'end', () => this.close())
    this.#listen(this.#input, 'close', () => this.close())
    this.#listen(this.#input, 'error', (err) => this.onerror?.(err))
    this.#listen(this.#output, 'error', (err) => {
      this.onerror?.(err)
      this.close()
    })
  }

  #listen(stream, event, handler) {
    stream.on(event, handler)
    this.#listeners.push([stream, event, handler])
  }

  /** Splits a chunk at its line breaks; only the new chunk is scanned. */
  #read(chunk) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    let start = 0
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      this.#take(data.subarray(start, end), true)
      start = end + 1
      if (this.#closed) return
    }
    if (start < data.length) this.#take(data.subarray(start), false)
  }

  /** Adds `piece` to the current line, and hands the line on when `complete`. */
  #take(piece, complete) {
    if (this.#skipping) {
      if (complete) this.#skipping = false
      return
    }
    if (this.#pendingBytes + piece.length > this.#maxMessageBytes) {
      this.#pending = []
      this.#pendingBytes = 0
      this.#skipping = !complete
      this.onerror?.(new Error(`a message longer than ${this.#maxMessageBytes} bytes was skipped`))
      return
    }
    if (!complete) {
      this.#pending.push(piece)
      this.#pendingBytes += piece.length
      return
    }
    let line
    if (this.#pending.length === 0) line = piece.toString('utf8')
    else {
      this.#pending.push(piece)
      const joined = Buffer.concat(this.#pending, this.#pendingBytes + piece.length)
      this.#pending = []
      this.#pendingBytes = 0
      line = joined.toString('utf8')
    }
    this.#deliver(line)
  }

  #deliver(line) {
    if (line.length === 0 || (line.length === 1 && line === '\r')) return
    let message
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line))
    } catch (err) {
      const shown = line.length > 80 ? `${line.slice(0, 80)}…` : line
      this.onerror?.(new Error(`not a JSON-RPC message (${err instanceof SyntaxError ? 'not JSON' : 'wrong shape'}): ${JSON.stringify(shown)}`))
      return
    }
    this.onmessage?.(message)
  }

  /**
   * Writes one message; resolves once the stream took it (waiting for `drain` when its
   * buffer is full).
   */
  send(message) {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new Error('the transport is closed'))
        return
      }
      const text = `${JSON.stringify(message)}\n`
      if (this.#output.write(text)) resolve()
      else this.#output.once('drain', resolve)
    })
  }

  /** Stops reading and reports the close once. */
  async close() {
    if (this.#closed) return
    this.#closed = true
    for (const [stream, event, handler] of this.#listeners) stream.removeListener(event, handler)
    this.#listeners = []
    this.#pending = []
    this.#input.pause?.()
    this.onclose?.()
  }
}
