// The text that replaces an offloaded tool result: the header with the token figure,
// the guidance paragraph (the SDK's wording), the preview, and the stored references;
// or, when storing failed under `onStorageError: 'truncate'`, the truncation notice.
import { isJson } from './content.js'
import { localeCount } from './numbers.js'
import { native, toNativeText } from './native.js'
import { CHARS_PER_TOKEN } from './options.js'
import { detached } from './strings.js'

/**
 * The SDK's preview: the first `previewTokens × 4` UTF-16 units of the texts joined by
 * `\n` (without building the join), as a string of its own (see ./strings.js).
 */
export function headPreview(parts, previewTokens) {
  const maxChars = previewTokens * CHARS_PER_TOKEN
  let out = ''
  for (let i = 0; i < parts.length && out.length < maxChars; i++) {
    if (i > 0) out += '\n'
    out += parts[i].length > maxChars ? parts[i].slice(0, maxChars) : parts[i]
  }
  return detached(out.length <= maxChars ? out : out.slice(0, maxChars))
}

/** {@link headPreview} of one text (no array to build). */
export function headPreviewOf(text, previewTokens) {
  const maxChars = previewTokens * CHARS_PER_TOKEN
  return detached(text.length > maxChars ? text.slice(0, maxChars) : text)
}

/**
 * Builds the preview natively: every text and JSON block (`texts`, by block index) is
 * handed to native memory, encoded as UTF-8 on a worker thread, and previewed in `mode`
 * within `previewTokens` (tokens of `encoding`, or 4 characters per token without one),
 * with `headShare` of each block's budget for its first lines in a head-and-tail preview.
 * Resolves with the preview and the UTF-8 bytes of each block (by block index) for storing.
 * @param {unknown[]} content - the result's blocks
 * @param {Map<number, string>} texts - their texts (see `blockTexts`)
 * @param {{ mode: string, previewTokens: number, headShare?: number, encoding?: string, encodingReady?: Promise<unknown> }} options
 */
export async function nativePreview(content, texts, { mode, previewTokens, headShare, encoding, encodingReady }) {
  const builder = new native.PreviewBuilder()
  const indices = []
  for (const [i, text] of texts) {
    builder.add(await toNativeText(text), isJson(content[i]))
    indices.push(i)
  }
  if (encoding) await encodingReady
  const built = await builder.build({
    mode,
    budget: encoding ? previewTokens : previewTokens * CHARS_PER_TOKEN,
    encoding,
    cutLongLines: Boolean(encoding) || mode !== 'head',
    headShare,
  })
  const utf8 = new Map(indices.map((blockIndex, k) => [blockIndex, built.texts[k]]))
  return { preview: built.preview, utf8 }
}

/** The guidance paragraph of an offload preview (the SDK's wording). */
function guidance(includeRetrievalTool) {
  const intro =
    'Tool result was offloaded to external storage due to size.\n' + 'Use the preview below if it answers your question.\n'
  if (!includeRetrievalTool) return intro + 'If you need more detail, use your available tools to access specific data.'
  return (
    intro +
    'If you need more detail, use retrieve_offloaded_content with a reference and:\n' +
    '  - pattern: regex or keyword to find matching lines with context\n' +
    '  - line_range: { start, end } to read a specific span of lines\n' +
    'Retrieve full content (omit pattern/line_range) as a last resort.'
  )
}

/** The token figure of a header: `~N` for estimates (and always with the SDK's counters). */
function tokenFigure(measure) {
  return `${measure.approximate ? '~' : ''}${localeCount(measure.tokens)}`
}

/**
 * The text that replaces an offloaded result (the SDK's layout).
 * @param {number} blockCount
 * @param {{ ref: string, description: string }[]} references - one per block (`ref` empty when not stored)
 * @param {{ tokens: number, approximate: boolean }} measure
 * @param {string} preview
 * @param {boolean} includeRetrievalTool
 */
export function offloadedText(blockCount, references, measure, preview, includeRetrievalTool) {
  const refLines = references
    .filter((r) => r.ref)
    .map((r) => referenceLine(r.ref, r.description))
    .join('\n')
  return layout(blockCount, tokenFigure(measure), preview, refLines, includeRetrievalTool)
}

/**
 * {@link offloadedText} of one stored text block whose tokens were estimated (the short
 * path): the same text, built without the arrays and closures of the general case (after
 * a full garbage collection each new object shape costs microseconds).
 * @param {string} ref - the block's reference
 * @param {string} description - the block's description
 * @param {number} tokens - the estimate
 * @param {string} preview - the preview shown above the reference
 * @param {boolean} includeRetrievalTool - whether the guidance names the retrieval tool
 */
export function offloadedTextOfOne(ref, description, tokens, preview, includeRetrievalTool) {
  return layout(1, `~${localeCount(tokens)}`, preview, referenceLine(ref, description), includeRetrievalTool)
}

/** The line of one stored reference. */
function referenceLine(ref, description) {
  return `  ${ref} (${description})`
}

/** The replacement text's layout, from its parts (the SDK's). */
function layout(blockCount, tokenFigureText, preview, refLines, includeRetrievalTool) {
  return (
    `[Offloaded: ${blockCount} blocks, ${tokenFigureText} tokens]\n` +
    `${guidance(includeRetrievalTool)}\n\n` +
    `${preview}\n\n` +
    `[Stored references:]\n${refLines}`
  )
}

/** The text that replaces a result whose storage failed (`onStorageError: 'truncate'`). */
export function truncatedText(blockCount, measure, preview, err) {
  const reason = String(err?.message ?? err).split('\n')[0].slice(0, 300)
  return (
    `[Truncated: ${blockCount} blocks, ${tokenFigure(measure)} tokens. ` +
    `The full tool result could not be stored (${reason}), so everything after this preview was dropped; ` +
    'it cannot be retrieved.]\n\n' +
    preview
  )
}
