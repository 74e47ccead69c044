// MCP's stdio framing (one JSON-RPC message per line) over any pair of streams, read in
// linear time. The SDK's own reader concatenates every chunk onto what it holds and
// rescans it for a line break, which makes a 100 MB message take minutes, and it stops
// at 10 MiB; this one keeps the chunks of an unfinished line apart, looks for the break
// in the new chunk only, and joins them once. Used for the proxy's own stdin/stdout and
// for an upstream server's pipes (./child-transport.js).
import { StringDecoder } from 'node:string_decoder'
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'

/** The largest message read by default: 1 GiB (a longer line is an error, and skipped). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 * 1024

const NEWLINE = 0x0a

/**
 * Bytes of a long line held as chunks before they are decoded into a piece of its text:
 * a 100 MB line is then held once as text while it is read, not as chunks and again as
 * one joined buffer (pieces this large also go straight to V8's large-object space).
 */
const DECODE_BATCH = 1024 * 1024

/** Bytes kept of each end of a skipped line: where its `id` can be read. */
const KEPT_END = 256

/** `value` as a JSON-RPC id (a string or a safe integer), or `undefined`. */
function idOf(value) {
  return typeof value === 'string' || Number.isSafeInteger(value) ? value : undefined
}

/** The last {@link KEPT_END} bytes of `previous` followed by `piece`, as a copy (so no chunk is kept). */
function lastBytes(previous, piece) {
  const joined = piece.length >= KEPT_END ? piece : Buffer.concat([previous, piece])
  return Buffer.from(joined.subarray(Math.max(0, joined.length - KEPT_END)))
}

/**
 * The id of a skipped line and whether it was a request, read from its first and last
 * bytes (JSON writers put `id` last or early; `method` comes first in requests).
 */
function skippedMessage(head, tail) {
  const ids = (text) => [...text.matchAll(/"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/g)].map((m) => m[1])
  const found = ids(tail.toString('latin1')).at(-1) ?? ids(head.toString('latin1'))[0]
  if (found === undefined) return undefined
  let id
  try {
    id = idOf(JSON.parse(found))
  } catch {
    return undefined
  }
  const start = head.toString('latin1')
  return id === undefined ? undefined : { id, isRequest: /"method"\s*:/.test(start) && !/^\s*\{\s*"(result|error)"/.test(start) }
}

/**
 * The SDK's `Transport` over a readable and a writable stream of newline-delimited
 * JSON-RPC. A line that is not a JSON-RPC message is reported to `onerror` and skipped
 * (the stream stays usable); the end of the input closes the transport.
 */
export class LineTransport {
  /** Chunks of the line being read (its break not seen yet), not decoded yet. */
  #pending = []
  #pendingBytes = 0
  /** The line's text decoded so far (in batches of {@link DECODE_BATCH} bytes), and its bytes. */
  #pieces = []
  #piecesBytes = 0
  #decoder = new StringDecoder('utf8')
  /** Whether the rest of an over-long line is being skipped. */
  #skipping = false
  /** The over-long line being skipped: its first and last bytes, and its length so far. */
  #skipped = undefined
  /** Whether lines that are no JSON-RPC message are answered with JSON-RPC errors (the side facing a client). */
  #replyToUnreadable
  #started = false
  #closed = false
  #inputDone = false
  #input
  #output
  #maxMessageBytes
  #listeners = []
  /** Settles when the output drains (or the transport closes), while its buffer is full. */
  #drained = undefined
  #releaseWriters = undefined

  /**
   * @param {NodeJS.ReadableStream} input - where messages are read from
   * @param {NodeJS.WritableStream} output - where messages are written
   * @param {{ maxMessageBytes?: number, replyToUnreadable?: boolean }} [options] - the
   *   longest message read (default 1 GiB), and whether a line that is not JSON is
   *   answered with a Parse error (JSON-RPC asks it of a server; default false)
   */
  constructor(input, output, options = {}) {
    this.#input = input
    this.#output = output
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    this.#replyToUnreadable = options.replyToUnreadable === true
    /** @type {((message: object) => void) | undefined} */
    this.onmessage = undefined
    /** @type {((error: Error) => void) | undefined} */
    this.onerror = undefined
    /** @type {(() => void) | undefined} */
    this.onclose = undefined
    /** Called when the input ends, instead of closing at once (then call `close()` when done). */
    this.oninputend = undefined
  }

  /** Starts reading. */
  async start() {
    if (this.#started) throw new Error('LineTransport already started')
    this.#started = true
    this.#listen(this.#input, 'data', (chunk) => this.#read(chunk))
    this.#listen(this.#input, 'end', () => this.#inputEnded())
    this.#listen(this.#input, 'close', () => this.#inputEnded())
    this.#listen(this.#input, 'error', (err) => this.onerror?.(err))
    this.#listen(this.#output, 'error', (err) => {
      this.onerror?.(err)
      this.close()
    })
  }

  /** The input ended: `oninputend` decides when to close (answers may still be on their way), else the transport closes now. */
  #inputEnded() {
    if (this.#closed || this.#inputDone) return
    this.#inputDone = true
    if (this.oninputend) this.oninputend()
    else this.close()
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
      this.#skipped.bytes += piece.length
      this.#skipped.tail = lastBytes(this.#skipped.tail, piece)
      if (complete) {
        this.#skipping = false
        this.#answerSkipped()
      }
      return
    }
    if (this.#piecesBytes + this.#pendingBytes + piece.length > this.#maxMessageBytes) {
      const first = []
      for (let n = 0, i = 0; n < KEPT_END && i <= this.#pending.length; i++) {
        const chunk = (i < this.#pending.length ? this.#pending[i] : piece).subarray(0, KEPT_END - n)
        first.push(chunk)
        n += chunk.length
      }
      const head = this.#pieces.length > 0 ? Buffer.from(this.#pieces[0].slice(0, KEPT_END), 'utf8').subarray(0, KEPT_END) : Buffer.concat(first)
      this.#skipped = { head, tail: lastBytes(Buffer.alloc(0), piece), bytes: this.#piecesBytes + this.#pendingBytes + piece.length }
      this.#resetLine()
      if (complete) this.#answerSkipped()
      else this.#skipping = true
      return
    }
    if (!complete) {
      this.#pending.push(piece)
      this.#pendingBytes += piece.length
      if (this.#pendingBytes >= DECODE_BATCH) this.#decodePending(false)
      return
    }
    let line
    if (this.#pending.length === 0 && this.#pieces.length === 0) line = piece.toString('utf8')
    else if (this.#pieces.length === 0) {
      this.#pending.push(piece)
      const joined = Buffer.concat(this.#pending, this.#pendingBytes + piece.length)
      this.#resetLine()
      line = joined.toString('utf8')
    } else {
      this.#pending.push(piece)
      this.#pendingBytes += piece.length
      this.#decodePending(true)
      line = this.#pieces.join('')
      this.#resetLine()
    }
    this.#deliver(line)
  }

  /** Decodes the chunks held so far into a piece of the line's text (`last`: the line ends here). */
  #decodePending(last) {
    const batch = Buffer.concat(this.#pending, this.#pendingBytes)
    this.#pieces.push(last ? this.#decoder.end(batch) : this.#decoder.write(batch))
    this.#piecesBytes += this.#pendingBytes
    this.#pending = []
    this.#pendingBytes = 0
  }

  /** Forgets the line being read. */
  #resetLine() {
    this.#pending = []
    this.#pendingBytes = 0
    this.#pieces = []
    this.#piecesBytes = 0
    this.#decoder = new StringDecoder('utf8')
  }

  /** A line longer than the limit was skipped: its call is answered (when its id can be read) rather than left waiting. */
  #answerSkipped() {
    const { head, tail, bytes } = this.#skipped
    this.#skipped = undefined
    const reason = `a message of ${bytes} bytes, longer than the limit of ${this.#maxMessageBytes} bytes (maxMessageBytes), was dropped`
    this.onerror?.(new Error(reason))
    const message = skippedMessage(head, tail)
    if (message) this.#answerMalformed(message.id, message.isRequest, reason)
  }

  #deliver(line) {
    if (line.length === 0 || (line.length === 1 && line === '\r')) return
    let value
    try {
      value = JSON.parse(line)
    } catch {
      const shown = line.length > 80 ? `${line.slice(0, 80)}…` : line
      this.onerror?.(new Error(`not a JSON-RPC message (not JSON): ${JSON.stringify(shown)}`))
      if (this.#replyToUnreadable) this.#reply({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not JSON' } })
      return
    }
    // A batch (protocol 2025-03-26) is taken message by message; each is answered on its own.
    const items = Array.isArray(value) ? value : [value]
    if (items.length === 0 && this.#replyToUnreadable) this.#reply({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: an empty batch' } })
    for (const item of items) {
      const parsed = JSONRPCMessageSchema.safeParse(item)
      if (parsed.success) {
        this.onmessage?.(parsed.data)
        continue
      }
      const text = JSON.stringify(item) ?? String(item)
      this.onerror?.(new Error(`not a JSON-RPC message (wrong shape): ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`))
      const id = idOf(item?.id)
      if (id !== undefined) this.#answerMalformed(id, typeof item.method === 'string', 'not a valid JSON-RPC message')
      else if (this.#replyToUnreadable) this.#reply({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC message' } })
    }
  }

  /**
   * A request that could not be read is answered with an error; a response that could
   * not be read becomes an error response for its call, so nobody waits for it.
   */
  #answerMalformed(id, isRequest, reason) {
    if (isRequest) this.#reply({ jsonrpc: '2.0', id, error: { code: -32600, message: `Invalid Request: ${reason}` } })
    else this.onmessage?.({ jsonrpc: '2.0', id, error: { code: -32603, message: `the answer could not be read: ${reason}` } })
  }

  #reply(message) {
    this.send(message).catch(() => {})
  }

  /**
   * Writes one message; resolves once the stream took it (waiting for `drain` when its
   * buffer is full).
   */
  send(message) {
    if (this.#closed) return Promise.reject(new Error('the transport is closed'))
    if (this.#output.write(`${JSON.stringify(message)}\n`)) return Promise.resolve()
    // One wait for every write made while the stream's buffer is full.
    this.#drained ??= new Promise((resolve) => {
      this.#releaseWriters = resolve
      this.#output.once('drain', () => {
        this.#drained = undefined
        resolve()
      })
    })
    return this.#drained
  }

  /** Stops reading and reports the close once. */
  async close() {
    if (this.#closed) return
    this.#closed = true
    for (const [stream, event, handler] of this.#listeners) stream.removeListener(event, handler)
    this.#listeners = []
    this.#resetLine()
    this.#releaseWriters?.()
    this.#input.pause?.()
    this.onclose?.()
  }
}
