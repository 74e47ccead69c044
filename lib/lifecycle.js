// The artifact lifecycle as JavaScript meets it: the options (TTL, byte budget, dedup,
// background sweep, clock) checked with clear errors, storages whose stores carry a
// session and a lifetime, and the unref'd background sweep.
import { logger } from './sdk.js'
import { checkNumber } from './numbers.js'

/** Internal: the native store of our storages (see ./storage/native-backed.js). */
export const CLOCK = Symbol('context-offloader.clock')
/** Internal: a storage's byte budget (`maxBytes`), when it has one. */
export const BUDGET = Symbol('context-offloader.budget')

/** The lifecycle options every storage of ours reads (see {@link lifecycleOptions}). */
export const LIFECYCLE_OPTION_NAMES = ['ttlSeconds', 'maxBytes', 'dedup', 'cleanupIntervalSeconds', 'clock']

/** Most milliseconds a lifetime may have (what a JavaScript number holds exactly). */
const MAX_MS = Number.MAX_SAFE_INTEGER

/** A lifetime in seconds (`name` as the user wrote it) as whole milliseconds. */
export function ttlMs(name, seconds) {
  checkNumber(name, seconds, 'a positive number of seconds', (n) => n > 0 && n * 1000 <= MAX_MS)
  return Math.max(1, Math.round(seconds * 1000))
}

/**
 * The lifecycle options of a storage, checked: `{ policy, intervalSeconds, clock }`
 * (`policy` for the native store: `defaultTtlMs`, `maxBytes`, `dedup`).
 * @param {{ ttlSeconds?: number, maxBytes?: number, dedup?: boolean, cleanupIntervalSeconds?: number, clock?: () => number }} options
 * @param {{ budget: boolean, dedup: boolean }} supports - what this storage offers
 * @param {string} storageName - for error messages
 */
export function lifecycleOptions(options, supports, storageName) {
  const { ttlSeconds, maxBytes, dedup, cleanupIntervalSeconds, clock } = options ?? {}
  const policy = {}
  if (ttlSeconds !== undefined) policy.defaultTtlMs = ttlMs('ttlSeconds', ttlSeconds)
  if (maxBytes !== undefined) {
    if (!supports.budget) throw new TypeError(`${storageName} has no maxBytes budget (InMemoryStorage and FileStorage do)`)
    policy.maxBytes = checkNumber('maxBytes', maxBytes, 'a positive integer number of bytes', (n) => Number.isSafeInteger(n) && n > 0)
  }
  if (dedup !== undefined) {
    if (typeof dedup !== 'boolean') throw new TypeError(`dedup must be a boolean, got ${typeof dedup}`)
    if (dedup && !supports.dedup) throw new TypeError(`${storageName} does not deduplicate (InMemoryStorage and FileStorage do)`)
    policy.dedup = dedup
  }
  if (cleanupIntervalSeconds !== undefined) {
    checkNumber('cleanupIntervalSeconds', cleanupIntervalSeconds, 'a positive integer number of seconds', (n) => Number.isInteger(n) && n > 0 && n <= 2_147_483)
  }
  if (clock !== undefined && typeof clock !== 'function') throw new TypeError('clock must be a function returning milliseconds since the epoch')
  return { policy, intervalSeconds: cleanupIntervalSeconds, clock }
}

/**
 * Sets up a storage's lifecycle: its policy on the native store, its clock, and the
 * background sweep (an unref'd timer that never keeps the process alive; `close()` stops it).
 * @returns {{ stop: () => void }}
 */
export function startLifecycle(storage, nativeStore, { policy, intervalSeconds, clock }) {
  if (Object.keys(policy).length > 0) nativeStore.setPolicy(policy)
  Object.defineProperty(storage, CLOCK, { value: clock })
  Object.defineProperty(storage, BUDGET, { value: policy.maxBytes })
  if (intervalSeconds === undefined) return { stop() {} }
  let running = false
  const timer = setInterval(async () => {
    if (running) return
    running = true
    try {
      const removed = await storage.cleanupExpired()
      if (removed > 0) logger.debug(`removed=<${removed}> | expired artifacts swept`)
    } catch (err) {
      logger.warn('the background sweep of expired artifacts failed', err)
    } finally {
      running = false
    }
  }, intervalSeconds * 1000)
  timer.unref?.()
  return { stop: () => clearInterval(timer) }
}

/** Reads `storage`'s clock into its native store (no-op without a clock). */
export function syncClock(storage, nativeStore) {
  const clock = storage?.[CLOCK]
  if (!clock) return
  const now = clock()
  checkNumber('clock()', now, 'a positive integer of milliseconds since the epoch', (n) => Number.isSafeInteger(n) && n > 0)
  nativeStore.setNow(now)
}
