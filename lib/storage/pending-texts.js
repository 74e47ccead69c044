// Short texts an InMemoryStorage has numbered but not yet copied into native memory.
//
// Copying a result into native memory as it is offloaded costs little work but lands
// in memory never touched before (a page fault every 4 KiB), and most offloaded
// results are never read. So an in-memory store with no lifecycle options (a default
// TTL aside: a copy keeps its store's time, so it expires as it would have) takes the
// reference number at once (references stay numbered in call order, whatever path each
// store takes) and keeps the JavaScript string; the copy is made when the store is next
// used in any other way (a read, a search, a count, a listing, another store), and
// never for a text evicted unread. Pending texts are held on the JavaScript heap,
// bounded by what copying them costs (see `MAX_PENDING_COST`): the copy runs on the
// JavaScript thread, as the inline stores it replaces would have.
//
// After a full garbage collection V8 builds every object shape again, and the first
// call of a native method or a builtin costs tens of microseconds: a pending store
// builds no object (an entry is an array) and makes no native call (the reference
// counter is shared memory). Its UTF-8 size is counted when the counters are read or
// the text is copied.
import { BEYOND_LATIN1 } from '../native.js'

/**
 * Most cost units pending per storage (see {@link costOf}): copying them takes about as
 * long as one inline store of a megabyte of ASCII (about a millisecond). Beyond, a store
 * copies what is pending, and itself, at once.
 */
export const MAX_PENDING_COST = 1 << 20
/** Cost units of one UTF-16 unit of a text beyond Latin-1: encoding it is that much slower. */
const TWO_BYTE_COST = 8
/** Longest Latin-1 text whose UTF-8 surely fits an inline copy (two bytes per character at most). */
const UNCHECKED_LATIN1_UNITS = 512 * 1024
/** Most UTF-8 bytes a native inline store copies into memory (`INLINE_COPY_LIMIT`, src/store.rs). */
const MAX_COPY_BYTES = 1024 * 1024

/** Fields of a pending entry (an array: no object shape to build). */
const SEQUENCE = 0
const KEY = 1
/** The text while pending; `undefined` once copied or dropped. */
const TEXT = 2
const CONTENT_TYPE = 3
const STORED_MS = 4
const CYCLE = 5
const LATIN1 = 6
/** Its UTF-8 bytes, once known (when copied or dropped); `-1` before. */
const BYTES = 7

/** Whether this machine stores integers little-endian (the shared counter's layout). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** What copying a text costs, in cost units: one per unit for Latin-1 strings, more beyond. */
const costOf = (latin1, text) => (latin1 ? text.length : TWO_BYTE_COST * text.length)

/** The UTF-8 bytes of entries whose size is not counted yet (see {@link PendingTexts#add}). */
export function countBytes(entries) {
  let total = 0
  for (const entry of entries) total += entry[BYTES] >= 0 ? entry[BYTES] : Buffer.byteLength(entry[TEXT], 'utf8')
  return total
}

/** The pending texts of one in-memory store, in store order. */
export class PendingTexts {
  /** @param {object} nativeStore - the storage's native in-memory store */
  constructor(nativeStore) {
    this.native = nativeStore
    /** @type {Map<string, unknown[]>} pending entries by reference, in store order */
    this.entries = new Map()
    /** The agent cycle last passed to the store's eviction (the native store's current cycle). */
    this.cycle = 0
    /** Cost units pending (see {@link costOf}). */
    this.cost = 0
    const cell = LITTLE_ENDIAN ? nativeStore.sequenceCell() : null
    /** The native reference counter's two 32-bit words (low first), or `undefined`. */
    this.counter = cell ? new Uint32Array(cell) : undefined
  }

  /** Takes the store's next reference number (as its native stores do). */
  nextSequence() {
    const counter = this.counter
    if (counter === undefined || counter[0] === 0xffffffff) return this.native.reserveSequence()
    counter[0] += 1
    return counter[1] * 0x100000000 + counter[0]
  }

  /**
   * Records a store of `text` under `key` and returns what an inline native store returns
   * (`<UTF-8 bytes>:<reference>`), with the size left out (`:<reference>`) when
   * `uncounted` is given: the entry is pushed there, to be counted with
   * {@link countBytes}. Returns `undefined` when the text is not kept (nothing was
   * stored: the caller stores it natively).
   * @param {string} text
   * @param {string} key
   * @param {string} contentType
   * @param {unknown[][]} [uncounted]
   * @returns {string | undefined}
   */
  add(text, key, contentType, uncounted) {
    const latin1 = !BEYOND_LATIN1.test(text)
    const cost = costOf(latin1, text)
    if (this.cost + cost > MAX_PENDING_COST) return undefined
    let bytes = -1
    if (latin1 && text.length > UNCHECKED_LATIN1_UNITS) {
      // A native store would not copy this much inline either.
      bytes = Buffer.byteLength(text, 'utf8')
      if (bytes > MAX_COPY_BYTES) return undefined
    }
    const sequence = this.nextSequence()
    const reference = `mem_${sequence}_${key}`
    const entry = [sequence, key, text, contentType, Date.now(), this.cycle, latin1, bytes]
    this.entries.set(reference, entry)
    this.cost += cost
    if (uncounted === undefined || bytes >= 0) return `${bytes >= 0 ? bytes : Buffer.byteLength(text, 'utf8')}:${reference}`
    uncounted.push(entry)
    return `:${reference}`
  }

  /** Copies every pending text into the native store, in store order. */
  flush() {
    const { native, entries } = this
    for (const [reference, entry] of entries) {
      // Gone from the pending texts before the copy: a copy that throws stores nothing.
      entries.delete(reference)
      this.cost -= costOf(entry[LATIN1], entry[TEXT])
      const method = entry[LATIN1] ? 'storeLatin1At' : 'storeUtf16At'
      const text = entry[TEXT]
      entry[TEXT] = undefined
      // Counted as nothing should the copy throw (then nothing was stored).
      entry[BYTES] = 0
      entry[BYTES] = native[method](entry[SEQUENCE], entry[KEY], text, entry[CONTENT_TYPE], entry[STORED_MS], entry[CYCLE])
    }
  }

  /**
   * Sets the current cycle and drops, uncopied, the texts the native store would evict in
   * it: those last used before `cycle - window` (`window` null: none). Returns how many.
   * @param {number} cycle - as the native store reads it
   * @param {number | null} window
   */
  evict(cycle, window) {
    this.cycle = cycle
    if (window === null || cycle < window || this.entries.size === 0) return 0
    const threshold = cycle - window
    let dropped = 0
    for (const [reference, entry] of this.entries) {
      if (entry[CYCLE] >= threshold) continue
      this.entries.delete(reference)
      this.drop(entry)
      dropped += 1
    }
    return dropped
  }

  /** Forgets every pending text. */
  clear() {
    for (const entry of this.entries.values()) this.drop(entry)
    this.entries.clear()
    this.cost = 0
  }

  /** Lets go of an entry's text, counting its size first. */
  drop(entry) {
    this.cost -= costOf(entry[LATIN1], entry[TEXT])
    if (entry[BYTES] < 0) entry[BYTES] = Buffer.byteLength(entry[TEXT], 'utf8')
    entry[TEXT] = undefined
  }
}
