// The native addon and the hand-over of JavaScript values to it.
//
// `native` is the platform's prebuilt addon, loaded synchronously through napi-rs's
// CommonJS loader (`binding.cjs`), so that loading this package never waits (no
// top-level await: `require('context-offloader')` works). When no addon fits, loading
// fails with a message naming the platform package to install. Strings and bytes cross
// into native memory through the helpers below; every other module reaches the addon here.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
// Node's own immediates: fake timers (a test's, an app's) replace the global ones, and an
// immediate they drop would leave callers waiting for their turn forever.
import { setImmediate } from 'node:timers'

const require = createRequire(import.meta.url)

/** The package's own manifest (its name, version and the platform packages it ships). */
const PACKAGE = require('../package.json')

/** The loaded addon (storage, search, previews, token counting, session files). */
export const native = loadNative()

/** Loads the platform's prebuilt addon, or fails with a message naming what to install. */
function loadNative() {
  try {
    return require('../binding.cjs')
  } catch (cause) {
    throw missingBinaryError(cause)
  }
}

/**
 * Whether this Linux uses musl rather than glibc, decided as napi-rs's loader decides:
 * `/usr/bin/ldd` mentions musl, else the process report names no glibc.
 */
export function isMusl() {
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    const header = process.report?.getReport?.()?.header
    return header ? !header.glibcVersionRuntime : false
  }
}

/**
 * The napi-rs platform name of a machine (`linux-x64-gnu`, `darwin-arm64`,
 * `win32-x64-msvc`), as napi-rs names its platform packages.
 * @param {string} [platform]
 * @param {string} [arch]
 * @param {() => boolean} [musl] - whether a Linux machine uses musl
 */
export function platformAbi(platform = process.platform, arch = process.arch, musl = isMusl) {
  if (platform === 'win32') return `win32-${arch}-${arch === 'x64' && process.config?.variables?.shlib_suffix === 'dll.a' ? 'gnu' : 'msvc'}`
  if (platform === 'linux') {
    const libc = musl() ? 'musl' : 'gnu'
    if (arch === 'arm') return `linux-arm-${libc}eabihf`
    return `linux-${arch}-${libc}`
  }
  if (platform === 'android') return arch === 'arm' ? 'android-arm-eabi' : `android-${arch}`
  return `${platform}-${arch}`
}

/**
 * The error for an addon that could not be loaded, in one line: the platform package to
 * install when the package ships one for this machine and it is not installed; the
 * loader's own failure when it is installed but does not load (a libc or CPU it was not
 * built for); the supported platforms when none is shipped. In a source checkout (a
 * `Cargo.toml` next to `package.json`) it says how to build the addon. The load failure
 * is kept as the cause.
 * @param {unknown} cause
 * @param {{ abi?: string, root?: URL }} [where] - the machine's platform name and the package root (for tests)
 */
export function missingBinaryError(cause, { abi = platformAbi(), root = new URL('..', import.meta.url) } = {}) {
  const name = PACKAGE.name
  const platformPackage = `${name}-${abi}`
  const shipped = Object.hasOwn(PACKAGE.optionalDependencies ?? {}, platformPackage)
  const checkout = existsSync(new URL('Cargo.toml', root))
  let what
  if (!existsSync(new URL('binding.cjs', root))) {
    what = `${name}: its native loader binding.cjs is missing (an incomplete copy of the package)`
  } else if (shipped && !installed(platformPackage, root)) {
    what =
      `${name}: the native binary for ${abi} is not installed: install the platform package with ` +
      `\`npm install ${platformPackage}@${PACKAGE.version}\` (an optional dependency of ${name}, left out by ` +
      `--omit=optional and by a node_modules copied from another platform)`
  } else if (shipped) {
    what = `${name}: the native binary for ${abi} (${platformPackage}) did not load: ${loadFailure(platformPackage, root)}`
  } else {
    const supported = Object.keys(PACKAGE.optionalDependencies ?? {}).map((p) => p.slice(name.length + 1))
    what = `${name}: no prebuilt native binary for ${abi} (${process.platform}-${process.arch}); there are binaries for ${supported.join(', ')}`
  }
  const hint = checkout ? '; in this source checkout, build it with `npm run build`' : ''
  return new Error(`${what}${hint}`, { cause })
}

/** Whether `specifier` resolves from the package root (where the loader resolves it). */
function installed(specifier, root) {
  try {
    createRequire(new URL('binding.cjs', root)).resolve(specifier)
    return true
  } catch {
    return false
  }
}

/** The first line of the error that loading the installed platform package raises. */
function loadFailure(specifier, root) {
  try {
    createRequire(new URL('binding.cjs', root))(specifier)
    return 'it loads on its own, but the loader refused it'
  } catch (err) {
    return String(err?.message ?? err).split('\n')[0]
  }
}

/**
 * Longest slice of a string copied into native memory between two yields to the event
 * loop: 1 MiB of Latin-1 or 2 MiB of UTF-16, a fraction of a millisecond; a result of
 * up to a megabyte goes over in one call.
 */
const SLICE_UNITS = 1 << 20

/** Resolves after the event loop has gone round once (timers and I/O have run). */
export const yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve))

/** Callers waiting for a turn at inline work (see {@link waitForTurn}), first come first, from `waitingHead` on. */
let waiting = []
/** Index of the first waiting caller in `waiting` (those before it have gone). */
let waitingHead = 0
/** Whether an immediate that lets waiting callers go is scheduled. */
let releaseScheduled = false

/**
 * Waits for a turn at inline work, for a caller that {@link mustYield} told to yield:
 * `if (mustYield()) await waitForTurn()`, then one piece of inline work. Waiting callers
 * go in the order they came, after the event loop has gone round; as many as the run
 * allows go in one turn, each with one piece of work, so that one agent's long chain
 * cannot starve another's, and many chains together hold the loop for about one run.
 * @returns {Promise<void>}
 */
export function waitForTurn() {
  return new Promise((resolve) => {
    waiting.push(resolve)
    scheduleRelease()
  })
}

function scheduleRelease() {
  if (releaseScheduled) return
  releaseScheduled = true
  setImmediate(release)
}

/** The loop went round: the first waiting caller goes, then more while the run lasts. */
function release() {
  releaseScheduled = false
  letNextGo()
}

/**
 * Lets the first waiting caller go (its piece of work runs in the microtasks that
 * follow), then, in a microtask after that piece, the next one while the run lasts;
 * the others wait for the next turn.
 */
function letNextGo() {
  if (waitingHead === waiting.length) return
  const go = waiting[waitingHead]
  waiting[waitingHead++] = undefined
  if (waitingHead === waiting.length) {
    waiting = []
    waitingHead = 0
  } else if (waitingHead >= 1024 && waitingHead * 2 >= waiting.length) {
    // Gone callers are dropped now and then, in one copy: no pass over the queue per caller.
    waiting = waiting.slice(waitingHead)
    waitingHead = 0
  }
  go()
  if (waitingHead === waiting.length) return
  if (mustYield()) scheduleRelease()
  else queueMicrotask(letNextGo)
}

/** Longest run of inline native work (stores, writes) before it lets the event loop run, in ms. */
const INLINE_RUN_MS = 2
/** When the current run of inline work began (`performance.now()`), or -1 when none has. */
let runStart = -1

/**
 * The event loop's turns, counted natively (`turns[0]` grows by one at every turn; see
 * `src/loop_turns.rs`), or `undefined` where they cannot be counted: then each run
 * schedules an immediate to learn that the loop went round.
 */
const turns = countLoopTurns()
/** `turns[0]` when the current run began. */
let runTurn = 0

function countLoopTurns() {
  try {
    const count = typeof native?.countLoopTurns === 'function' ? native.countLoopTurns() : null
    return count ? new Int32Array(count) : undefined
  } catch {
    return undefined
  }
}

/** Ends the current run: the event loop went round. */
function endRun() {
  runStart = -1
}

/**
 * Whether the caller must wait for its turn ({@link waitForTurn}) before its next piece
 * of inline native work. Work done inline resolves promises without ever
 * giving timers and I/O a turn, so an awaited loop of small stores would starve them:
 * a run of inline work may last {@link INLINE_RUN_MS}; the event loop's next turn ends it.
 */
export function mustYield() {
  const now = performance.now()
  if (turns !== undefined) {
    if (runStart < 0 || turns[0] !== runTurn) {
      runTurn = turns[0]
      runStart = now
      return false
    }
  } else if (runStart < 0) {
    runStart = now
    setImmediate(endRun)
    return false
  }
  return now - runStart >= INLINE_RUN_MS
}

/**
 * Matches a character at or above U+0100. One RegExp for every caller: a regular
 * expression literal in a function is compiled again on each call while V8 keeps no
 * feedback for the function (its first calls; and in the benchmark's offloads made
 * right after a full garbage collection, 42 µs on a 100 KB string); this one is
 * compiled once. Answered at once for V8's one-byte strings. (No `g` flag: `test`
 * keeps no state between calls.)
 */
export const BEYOND_LATIN1 = /[^\x00-\xff]/

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
    if (BEYOND_LATIN1.test(slice)) nativeText.pushUtf16(slice)
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
  if (BEYOND_LATIN1.test(text)) nativeText.pushUtf16(text)
  else nativeText.pushLatin1(text)
  return nativeText
}

/** Texts up to this many UTF-16 units are handed to native stores in one call, as strings. */
export const SHORT_TEXT_UNITS = 1 << 17

/**
 * Texts of characters below U+0100 up to this many units also go to in-memory stores in
 * one call (a copy of at most 1 MiB; `src/store.rs` refuses more UTF-8 inline, and the
 * text then goes the general way).
 */
export const INLINE_LATIN1_UNITS = 1 << 20

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
