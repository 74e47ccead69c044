// Strings kept after a tool result is gone (a preview, a manifest line) must not keep
// the result alive: V8 makes `slice` of a long string a view into it, so a 4 KB preview
// cut from a 100 MB result would hold the 100 MB on the V8 heap for as long as the
// preview lives (in the conversation, in the manifest).

/** Below this length V8 copies a slice instead of making a view of its parent. */
const VIEW_MIN_LENGTH = 13

/**
 * `text` as a string that holds no longer string alive: the same UTF-16 code units
 * (lone surrogates included). Joining it to a character makes V8 build a new flat
 * string when it is sliced again, so the result refers only to that copy (checked by
 * `__test__/strings.test.ts`, which measures the heap).
 * @param {string} text
 */
export function detached(text) {
  return text.length < VIEW_MIN_LENGTH ? text : ` ${text}`.slice(1)
}
