// The retrieval search as the tool asks for it: the query from the tool's input and the
// answer text from the native outcome. The search itself runs natively, on the stored
// blob of a native storage without copying it out, or on the bytes any other storage returns.
import { syncClock } from './lifecycle.js'
import { native, toBytes } from './native.js'
import { nativeFor } from './storage/native-backed.js'
import { retrieveContent } from './storage/unified.js'

/** Whether the tool's input asks for the whole content (no pattern, line range or context). */
export function isFullRetrieval(input) {
  return !input.pattern && !input.line_range && input.context_lines === undefined
}

/** The native search query of the tool's input. */
export function searchQueryOf(input) {
  return {
    pattern: input.pattern,
    lineStart: input.line_range?.start,
    lineEnd: input.line_range?.end,
    contextLines: input.context_lines,
  }
}

/** The tool's answer for a native search outcome: the output, an error, or the binary-content notice. */
function searchAnswer(outcome) {
  if (outcome.output != null) return outcome.output
  // The native message is addressed to the model and starts with `Error: ` itself.
  if (outcome.error != null) return outcome.error
  return (
    `Error: cannot search binary content (${outcome.contentType}). ` +
    'Omit pattern/line_range/context_lines to retrieve the full content.'
  )
}

/**
 * Greps or slices the content stored under `input.reference`, answering within
 * `maxChars` UTF-16 units; rejects when the reference cannot be read.
 * @param {object} storage - the storage the reference was issued by
 * @param {{ reference: string, pattern?: string, line_range?: { start: number, end: number }, context_lines?: number }} input
 * @param {number} maxChars
 */
export async function searchStored(storage, input, maxChars) {
  const nativeStore = nativeFor(storage, 'retrieve')
  if (nativeStore) syncClock(storage, nativeStore)
  if (nativeStore) {
    // An unpaired surrogate would be read natively as U+FFFD (see NativeBackedStorage.retrieve).
    if (!String(input.reference).isWellFormed()) throw new Error(`Reference not found: ${input.reference}`)
    return searchAnswer(await nativeStore.search(input.reference, searchQueryOf(input), maxChars))
  }
  const result = await retrieveContent(storage, input.reference)
  const content = result.content instanceof Uint8Array ? result.content : toBytes(result.content)
  return searchAnswer(await native.searchBytes(content, result.contentType, searchQueryOf(input), maxChars))
}
