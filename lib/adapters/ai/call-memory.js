// What the AI SDK adapter remembers about tool calls, per `Offloader`: the session each
// call ran in (its `execute` knows it; `toModelOutput` is given no session) and the
// offloaded model output made for its output, so that the SDK asking again for the same
// call (ai 6's `streamText` asks twice, response messages ask again) is answered at once.

import { EPHEMERAL_SESSION_PREFIX, opaqueId } from '../../manifest.js'

/** Calls remembered per offloader once their output was made, at most (the least recently used are forgotten first). */
const MAX_CALLS = 1024

/**
 * Calls that ran and whose output was not made yet, at most per offloader: each holds
 * only its session, so that a slow call keeps it however many calls run meanwhile (a
 * call whose output is never made, such as a run given up, is forgotten past this).
 */
const MAX_RUNNING = 64 * 1024

/**
 * UTF-16 units of string outputs held to recognise a call's output again, at most: a
 * longer string is recognised through the core's `reuse` instead (it hashes the content).
 */
const MAX_HELD_CHARS = 32 * 1024 * 1024

/**
 * How an output is held to recognise it: objects weakly (never kept alive for this),
 * strings within {@link MAX_HELD_CHARS}, other values as they are. A longer string is
 * held only until its model output is made (`lasting: false`), so that concurrent asks
 * share one offload.
 */
function holdOf(output) {
  if ((typeof output === 'object' && output !== null) || typeof output === 'function') {
    const ref = new WeakRef(output)
    return { same: (o) => ref.deref() === o, chars: 0, lasting: true }
  }
  if (typeof output === 'string') {
    const lasting = output.length <= MAX_HELD_CHARS
    return { same: (o) => o === output, chars: lasting ? output.length : 0, lasting }
  }
  return { same: (o) => Object.is(o, output), chars: 0, lasting: true }
}

/** The calls of one offloader (see the module comment). */
class CallMemory {
  /** Calls that ran, by tool call id, until their output is made: `{ session }` (in order of running). */
  #running = new Map()
  /** Calls whose output was made, by tool call id: `{ session, hold?, modelOutput? }` (in order of use). */
  #calls = new Map()
  #heldChars = 0

  /**
   * Records that a call ran in `session` (a new run of the same id forgets what was made
   * for the last); returns the record, for {@link failed}.
   */
  executed(toolCallId, session) {
    this.#forget(toolCallId)
    this.#running.delete(toolCallId)
    const call = { session }
    this.#running.set(toolCallId, call)
    if (this.#running.size > MAX_RUNNING) this.#running.delete(this.#running.keys().next().value)
    return call
  }

  /** Forgets a call that failed (an error never reaches `toModelOutput`), unless it ran again since. */
  failed(toolCallId, call) {
    if (this.#running.get(toolCallId) === call) this.#running.delete(toolCallId)
  }

  /**
   * A session no call runs in and no retrieval reads: where a tool set whose session is
   * a function offloads a call it knows nothing of (no `execute` ran for it in this
   * process), rather than in the offloader's own session, which every call without a
   * session reads.
   */
  unknownCallSession = `${EPHEMERAL_SESSION_PREFIX}${opaqueId()}`

  /** `{ session }` of a call that ran in this process and is remembered, else `undefined`. */
  ran(toolCallId) {
    return this.#running.get(toolCallId) ?? this.#calls.get(toolCallId)
  }

  /** The model output (a promise of `{ output, replaced }`) made for this call, session and output, if remembered. */
  recall(toolCallId, session, output) {
    const call = this.#calls.get(toolCallId)
    if (!call?.modelOutput || call.session !== session || !call.hold.same(output)) return undefined
    this.#calls.delete(toolCallId)
    this.#calls.set(toolCallId, call)
    return call.modelOutput
  }

  /**
   * Remembers the model output made for this call, session and output: a promise of
   * `{ output, replaced }`, kept while it is under way (concurrent asks share it), and
   * after only when it replaced the output with a preview (any other model output is
   * the tool's own size: made again when asked again). The session stays when the
   * output is let go (it rejected, was not replaced, or was too long to hold).
   */
  keep(toolCallId, session, output, modelOutput) {
    const hold = holdOf(output)
    this.#forget(toolCallId)
    this.#running.delete(toolCallId)
    const call = { session, hold, modelOutput }
    this.#calls.set(toolCallId, call)
    this.#heldChars += hold.chars
    const letGo = () => {
      if (this.#calls.get(toolCallId) !== call) return
      this.#heldChars -= call.hold.chars
      call.hold = undefined
      call.modelOutput = undefined
    }
    modelOutput.then((made) => (hold.lasting && made.replaced) || letGo(), letGo)
    this.#trim()
  }

  #forget(toolCallId) {
    const call = this.#calls.get(toolCallId)
    if (!call) return
    if (call.hold) this.#heldChars -= call.hold.chars
    this.#calls.delete(toolCallId)
  }

  /** Forgets the least recently used calls beyond the bounds. */
  #trim() {
    for (const id of this.#calls.keys()) {
      if (this.#calls.size <= MAX_CALLS && this.#heldChars <= MAX_HELD_CHARS) break
      this.#forget(id)
    }
  }
}

/** The memory of each offloader (it goes with the offloader). */
const memories = new WeakMap()

/**
 * The call memory of `offloader`: shared by every tool set built on it, so that a
 * conversation re-sent through another tool set finds the sessions its calls ran in.
 * @param {object} offloader
 * @returns {CallMemory}
 */
export function callMemoryOf(offloader) {
  let memory = memories.get(offloader)
  if (!memory) memories.set(offloader, (memory = new CallMemory()))
  return memory
}
