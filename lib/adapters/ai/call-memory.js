// What the AI SDK adapter remembers about tool calls, per `Offloader`: the session each
// call ran in (its `execute` knows it; `toModelOutput` is given no session) and the model
// output made for its output, so that the SDK asking again for the same call (ai 6's
// `streamText` asks twice, response messages ask again) is answered at once.

/** Calls remembered per offloader, at most (the least recently used are forgotten first). */
const MAX_CALLS = 1024

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
  /** By tool call id: `{ session, hold?, modelOutput? }` (in order of use). */
  #calls = new Map()
  #heldChars = 0

  /** Records that a call ran in `session` (a new run of the same id forgets what was made for the last). */
  executed(toolCallId, session) {
    this.#forget(toolCallId)
    this.#calls.set(toolCallId, { session })
    this.#trim()
  }

  /** The session a call ran in, if it ran in this process and is remembered. */
  sessionOf(toolCallId) {
    return this.#calls.get(toolCallId)?.session
  }

  /** The model output (a promise) made for this call, session and output, if remembered. */
  recall(toolCallId, session, output) {
    const call = this.#calls.get(toolCallId)
    if (!call?.modelOutput || call.session !== session || !call.hold.same(output)) return undefined
    this.#calls.delete(toolCallId)
    this.#calls.set(toolCallId, call)
    return call.modelOutput
  }

  /**
   * Remembers the model output (a promise) made for this call, session and output; the
   * session stays when the output is let go (it rejected, or was too long to hold).
   */
  keep(toolCallId, session, output, modelOutput) {
    const hold = holdOf(output)
    this.#forget(toolCallId)
    const call = { session, hold, modelOutput }
    this.#calls.set(toolCallId, call)
    this.#heldChars += hold.chars
    const letGo = () => {
      if (this.#calls.get(toolCallId) !== call) return
      this.#heldChars -= call.hold.chars
      call.hold = undefined
      call.modelOutput = undefined
    }
    modelOutput.then(() => hold.lasting || letGo(), letGo)
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
