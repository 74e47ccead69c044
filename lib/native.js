// The native addon and the hand-over of JavaScript values to it.
//
// `native` is the platform's prebuilt addon (`binding.js`, built by napi-rs); loading
// fails with a message naming the platform when none fits. Strings and bytes cross into
// native memory through the helpers below; every other module reaches the addon here.

/** The loaded addon (storage, search, previews, token counting, session files). */
export const native = await loadNative()

/** Loads the platform's prebuilt addon, or fails with a message naming the platform. */
async function loadNative() {
  try {
    return await import('../binding.js')
  } catch (cause) {
    const platform = `${process.platform}-${process.arch}`
    throw new Error(
      `context-offloader: no prebuilt native binary for ${platform} could be loaded. ` +
        `Install the package on a supported platform (linux x64/arm64 gnu/musl, macOS x64/arm64, ` +
        `windows x64/arm64) or build it from source with \`npm run build\`. Cause: ${cause?.message ?? cause}`,
      { cause },
    )
  }
}

/** Longest slice of a string copied into native memory between two yields to the event loop. */
const SLICE_UNITS = 1 << 19

/** Resolves after the event loop has gone round once (timers and I/O have run). */
export const yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve))

/** Longest run of inline native work (stores, writes) before it lets the event loop run, in ms. */
const INLINE_RUN_MS = 2
/** When the current run of inline work began (`performance.now()`), or -1 when none has. */
let runStart = -1

/** Ends the current run: the event loop went round. */
function endRun() {
  runStart = -1
}

/**
 * Whether the caller must yield to the event loop ({@link yieldToEventLoop}) before its
 * next piece of inline native work. Work done inline resolves promises without ever
 * giving timers and I/O a turn, so an awaited loop of small stores would starve them:
 * a run of inline work may last {@link INLINE_RUN_MS}; the event loop's next turn ends it.
 */
export function mustYield() {
  const now = performance.now()
  if (runStart < 0) {
    runStart = now
    setImmediate(endRun)
    return false
  }
  return now - runStart >= INLINE_RUN_MS
}

/**
 * Copies a JavaScript string into native memory. Slices whose characters are all
 * below U+0100 are copied byte for byte (V8 answers the regex test in constant time
 * for one-byte strings); others as UTF-16. Long strings go in slices with a yield to
 * the event loop between them, so a 10 MB result never blocks timers for long; the
 * UTF-8 encoding happens later on a worker thread.
 * @param {string} text
 */
export async function toNativeText(text) {
  const nativeText = new native.NativeText(text.length)
  for (let offset = 0; offset < text.length; offset += SLICE_UNITS) {
    const slice = text.length <= SLICE_UNITS ? text : text.slice(offset, offset + SLICE_UNITS)
    if (/[^\x00-\xff]/.test(slice)) nativeText.pushUtf16(slice)
    else nativeText.pushLatin1(slice)
    if (offset + SLICE_UNITS < text.length) await yieldToEventLoop()
  }
  return nativeText
}

/**
 * {@link toNativeText} without yielding, for texts of one slice at most (the caller
 * needs the hand-over to happen now, before its next step).
 * @param {string} text - at most `SLICE_UNITS` long
 */
export function toNativeTextNow(text) {
  const nativeText = new native.NativeText(text.length)
  if (/[^\x00-\xff]/.test(text)) nativeText.pushUtf16(text)
  else nativeText.pushLatin1(text)
  return nativeText
}

/** Texts up to this many UTF-16 units are handed to native stores in one call, as strings. */
export const SHORT_TEXT_UNITS = 1 << 17

/** A plain Uint8Array view of a Buffer (so SDK blocks hold the type they expect). */
export function asUint8Array(buffer) {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** Accepts what JavaScript callers pass as content: Uint8Array/Buffer/ArrayBuffer/string. */
export function toBytes(content) {
  if (content instanceof Uint8Array) return content
  if (content instanceof ArrayBuffer) return new Uint8Array(content)
  if (ArrayBuffer.isView(content)) return new Uint8Array(content.buffer, content.byteOffset, content.byteLength)
  if (typeof content === 'string') return new TextEncoder().encode(content)
  throw new TypeError('content must be a Uint8Array, Buffer, ArrayBuffer or string')
}
