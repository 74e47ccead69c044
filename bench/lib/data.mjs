/**
 * Deterministic synthetic tool results. Content is written into a Buffer once and
 * turned into a fresh, flat (non-rope) string per run with `Buffer.toString`, so
 * both implementations receive identical, flat input and no run reuses a string
 * another run has already touched.
 */

/** A small deterministic pseudo-random generator (mulberry32). */
export function random(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PATHS = ['/api/v1/items', '/api/v1/orders', '/api/v2/users', '/health', '/api/v1/search', '/static/app.js']
const ERROR_MESSAGES = [
  'upstream timeout after 30000ms while calling inventory-service',
  'connection refused by payments-service',
  'request failed: read timeout on socket',
  'validation failed: missing field "quantity"',
]

/**
 * One application-log line of exactly `width` characters (ASCII, no newline).
 * About 2% of lines are ERROR lines, half of which mention a timeout; about 3%
 * are WARN lines, some of which mention a timeout too.
 */
function logLine(index, next, width) {
  const seconds = index % 86_400
  const time = `2024-05-01T${String(Math.floor(seconds / 3600)).padStart(2, '0')}:${String(Math.floor(seconds / 60) % 60).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}.${String(index % 1000).padStart(3, '0')}Z`
  const roll = next()
  const worker = `worker-${Math.floor(next() * 8)}`
  let body
  if (roll < 0.02) {
    body = `ERROR ${worker} ${ERROR_MESSAGES[Math.floor(next() * ERROR_MESSAGES.length)]}`
  } else if (roll < 0.05) {
    body = `WARN  ${worker} slow response, retrying (timeout budget ${Math.floor(next() * 900)}ms left)`
  } else {
    const path = PATHS[Math.floor(next() * PATHS.length)]
    body = `INFO  ${worker} GET ${path}/${Math.floor(next() * 100_000)} status=200 duration_ms=${Math.floor(next() * 250)}`
  }
  const line = `${time} ${body} id=${index.toString(36)}`
  return line.length >= width ? line.slice(0, width) : line + ' '.repeat(width - line.length)
}

/**
 * A log of `lineCount` lines of `lineWidth` characters plus a newline each.
 * @returns {Buffer}
 */
export function logBuffer(lineCount, lineWidth = 99, seed = 42) {
  const next = random(seed)
  const stride = lineWidth + 1
  const buffer = Buffer.allocUnsafe(lineCount * stride)
  for (let i = 0; i < lineCount; i++) {
    buffer.write(logLine(i, next, lineWidth), i * stride, 'latin1')
    buffer[i * stride + lineWidth] = 0x0a
  }
  return buffer
}

/** A log of about `bytes` bytes (100-byte lines). */
export function logOfSize(bytes, seed = 42) {
  return logBuffer(Math.max(1, Math.round(bytes / 100)), 99, seed)
}

/** A fresh flat string with the buffer's content (ASCII, or UTF-8 where it has other characters). */
export function textOf(buffer) {
  return buffer.isUtf8Text ? buffer.toString('utf8') : buffer.toString('latin1')
}

/** Words of other scripts that real tool output carries: curly quotes, accents, CJK, emoji. */
const MIXED = ['“quoted”', 'naïve café', '東京の天気', '서울', 'Ωμέγα', '🙂', '— dash', 'Straße']

/**
 * A log of about `bytes` UTF-8 bytes like {@link logOfSize}, where every line also holds a
 * word of another script (so the text has characters beyond Latin-1, as most real tool
 * output does). Marked so that {@link textOf} decodes it as UTF-8.
 */
export function mixedLogOfSize(bytes, seed = 42) {
  const next = random(seed)
  const lines = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const line = `${logLine(i, next, 80)} ${MIXED[i % MIXED.length]}\n`
    lines.push(line)
    size += Buffer.byteLength(line)
  }
  const buffer = Buffer.from(lines.join(''), 'utf8')
  buffer.isUtf8Text = true
  return buffer
}

/** `bytes` bytes of printable ASCII, as a small stored artifact. */
export function smallPayload(bytes = 200) {
  const buffer = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i++) buffer[i] = 0x61 + (i % 26)
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}
