// What the plugin did, for operators: counters returned by `offloader.stats()`, and one
// OpenTelemetry span event per offload and retrieval on the span the SDK is recording
// (when its tracing is on).
import { recordingSpan } from './sdk.js'
import { countBytes } from './storage/pending-texts.js'

/** Retrieval modes counted by `stats()`. */
export const RETRIEVAL_MODES = ['full', 'pattern', 'lineRange', 'head', 'query', 'list']

/** Span event names. */
export const OFFLOAD_EVENT = 'context_offloader.offload'
export const RETRIEVAL_EVENT = 'context_offloader.retrieve'

/** Counters of one plugin instance, since it was created. */
export class OffloaderCounters {
  offloads = 0
  blocksStored = 0
  bytesOffloaded = 0
  tokensBefore = 0
  tokensAfter = 0
  retrievals = Object.fromEntries(RETRIEVAL_MODES.map((m) => [m, 0]))
  pagesServed = 0
  errors = { offload: 0, retrieval: 0 }
  /**
   * Stores whose UTF-8 size is not in `bytesOffloaded` yet: texts an in-memory storage
   * has not copied (see ./storage/pending-texts.js), counted when read.
   */
  uncounted = []

  /** Adds the sizes of the stores in `uncounted` to `bytesOffloaded`. */
  countPending() {
    if (this.uncounted.length === 0) return
    this.bytesOffloaded += countBytes(this.uncounted)
    this.uncounted = []
  }

  /** A plain copy (what `stats()` returns). */
  snapshot() {
    this.countPending()
    return {
      offloads: this.offloads,
      blocksStored: this.blocksStored,
      bytesOffloaded: this.bytesOffloaded,
      tokensBefore: this.tokensBefore,
      tokensAfter: this.tokensAfter,
      tokensKeptOut: Math.max(0, this.tokensBefore - this.tokensAfter),
      retrievals: { ...this.retrievals },
      pagesServed: this.pagesServed,
      errors: { ...this.errors },
    }
  }
}

/** Attributes with `undefined` values left out (OpenTelemetry takes primitives only). */
function defined(attributes) {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined && v !== null))
}

/**
 * Adds a span event to the span the SDK is recording for `agent`; never throws (tracing
 * must not break the agent).
 */
export function traceEvent(agent, name, attributes) {
  const span = recordingSpan(agent)
  if (!span) return false
  try {
    span.addEvent(name, defined(attributes))
    return true
  } catch {
    return false
  }
}
