// InMemoryStorage: offloaded blocks in native memory (not on the V8 heap), with the
// SDK's turn-based eviction, and the SDK's unified storage on a native map beside them.
import { sweepManifestQuietly } from '../manifest-sweep.js'
import { logger, EPHEMERAL } from '../sdk.js'
import { native } from '../native.js'
import { LIFECYCLE_OPTION_NAMES, lifecycleOptions, startLifecycle } from '../lifecycle.js'
import { warnUnknownOptions } from '../option-names.js'
import { checkNumber } from '../numbers.js'
import { NATIVE, NativeBackedStorage, PENDING, SWEEP } from './native-backed.js'
import { PendingTexts } from './pending-texts.js'

/**
 * The native eviction window for a JavaScript one. Entries are evicted when
 * `lastAccess < cycle - n`; for integer cycles that equals `lastAccess < cycle - floor(n)`.
 */
function nativeCycles(n) {
  return n === null || !Number.isFinite(n) ? null : Math.floor(n)
}

/** The native store of `storage`, without copying the texts it has not copied yet. */
function uncopied(storage) {
  return storage[PENDING]?.native ?? storage[NATIVE]
}

/**
 * Offloaded content kept in native memory (not on the V8 heap), with the SDK's
 * turn-based eviction: entries not stored or retrieved within `evictAfterTurns`
 * agent cycles are dropped. References look like `mem_<n>_<key>`.
 */
export class InMemoryStorage extends NativeBackedStorage {
  /** The SDK's default eviction window, in agent cycles. */
  static DEFAULT_EVICT_AFTER_TURNS = 20
  #evictAfterTurns
  #boundAgent = null;
  /** Content does not survive a restart (as the SDK's unified InMemoryStorage). */
  [EPHEMERAL] = true

  /**
   * @param {number | null | { evictAfterTurns?: number | null, ttlSeconds?: number, maxBytes?: number, dedup?: boolean, cleanupIntervalSeconds?: number, clock?: () => number }} [options=20]
   *   idle cycles before eviction (`null` disables), or options: the same, plus the
   *   lifecycle (a default TTL, a byte budget with least-recently-used eviction,
   *   deduplication, a background sweep, a clock).
   */
  constructor(options = InMemoryStorage.DEFAULT_EVICT_AFTER_TURNS) {
    const isOptions = typeof options === 'object' && options !== null
    warnUnknownOptions('InMemoryStorage', options, ['evictAfterTurns', ...LIFECYCLE_OPTION_NAMES])
    const evictAfterTurns = isOptions ? (options.evictAfterTurns === undefined ? InMemoryStorage.DEFAULT_EVICT_AFTER_TURNS : options.evictAfterTurns) : options
    const lifecycle = lifecycleOptions(isOptions ? options : undefined, { budget: true, dedup: true }, 'InMemoryStorage')
    if (evictAfterTurns !== null) {
      checkNumber('evictAfterTurns', evictAfterTurns, 'a positive number of cycles or null', () => true)
      if (evictAfterTurns < 1) throw new Error('evictAfterTurns must be a positive integer')
    }
    const nativeStore = native.NativeStore.memory(nativeCycles(evictAfterTurns))
    // With no lifecycle but a default TTL (no budget, deduplication, sweep or clock),
    // short texts are copied into native memory only when the store is next used (see
    // ./pending-texts.js); the store's handle is then read through a getter that copies
    // them first. A copy keeps the time of its store, so a text expires when it would
    // have had it been copied at once: every use that could tell copies it first.
    const policyNames = Object.keys(lifecycle.policy)
    const deferred =
      policyNames.every((name) => name === 'defaultTtlMs') && lifecycle.intervalSeconds === undefined && lifecycle.clock === undefined
    super(deferred ? null : nativeStore, false)
    if (deferred) Object.defineProperty(this, PENDING, { value: new PendingTexts(nativeStore) })
    this.#evictAfterTurns = evictAfterTurns
    Object.defineProperty(this, SWEEP, { value: startLifecycle(this, nativeStore, lifecycle) })
  }

  /**
   * The native store; first copies into it the texts not copied yet (see
   * ./pending-texts.js), when this storage keeps any.
   * @internal
   */
  get [NATIVE]() {
    const pending = this[PENDING]
    if (pending?.entries.size > 0) pending.flush()
    return pending?.native
  }

  /** Removes all stored content (offloaded blocks and unified-storage values). */
  clear() {
    this[PENDING]?.clear()
    this[NATIVE].clear()
    this[NATIVE].kvClear()
  }

  /** Number of entries held. */
  get size() {
    return this[NATIVE].size
  }

  /** Total bytes of content held in native memory. */
  get byteLength() {
    return this[NATIVE].byteLength
  }

  /**
   * Claims this storage for one agent and adopts the plugin's eviction window unless
   * one was set at construction (as the SDK's InMemoryStorage does).
   * @internal
   */
  _bind(agent, evictAfterCycles) {
    if (this.#boundAgent === null) {
      this.#boundAgent = new WeakRef(agent)
    } else if (this.#boundAgent.deref() !== agent) {
      throw new Error(
        'InMemoryStorage cannot be shared across multiple agents. ' + 'Use a separate InMemoryStorage instance per agent.',
      )
    }
    if (evictAfterCycles !== undefined && this.#evictAfterTurns === InMemoryStorage.DEFAULT_EVICT_AFTER_TURNS) {
      this.#evictAfterTurns = evictAfterCycles
      uncopied(this).setEvictAfter(nativeCycles(evictAfterCycles))
    }
  }

  /**
   * Sets the current cycle and evicts idle entries. Called by the plugin before each model call.
   * @internal
   */
  _evict(cycle) {
    // Texts not copied yet that are due go uncopied (none of them is in the manifest).
    const dropped = this[PENDING]?.evict(Number.isFinite(cycle) && cycle > 0 ? Math.floor(cycle) : 0, nativeCycles(this.#evictAfterTurns)) ?? 0
    const nativeStore = uncopied(this)
    const evicted = nativeStore.evict(cycle)
    if (evicted + dropped > 0) logger.debug(`evicted=<${evicted + dropped}>, cycle=<${cycle}> | stale entries removed`)
    // The offload manifest's entries of what was evicted go too.
    if (evicted > 0) return sweepManifestQuietly(nativeStore)
  }
}
