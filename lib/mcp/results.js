// MCP tool results and the core's content parts: which parts of a `CallToolResult` are
// offloaded (its text, embedded text resources and `structuredContent`; images, audio and
// binary resources only with `offloadMedia`), and the result the client gets instead.

/** Below this many characters, a single-field `structuredContent` is kept even when its field repeats a text (its name may be what the model needs). */
const REPEAT_MIN_CHARS = 1000

/**
 * Whether `structuredContent` only repeats a text item: the serialised JSON a tool
 * should also send as text (compact or indented), or a single long string field holding
 * a text item's text (as the reference filesystem server sends a file twice). What is
 * repeated is stored once, as the text.
 */
function repeatsText(structured, texts) {
  if (texts.length === 0) return false
  const values = Object.values(structured)
  if (values.length === 1 && typeof values[0] === 'string' && values[0].length >= REPEAT_MIN_CHARS && texts.includes(values[0])) return true
  const compact = JSON.stringify(structured)
  if (texts.some((t) => t.length === compact.length && t === compact)) return true
  const indented = JSON.stringify(structured, null, 2)
  return texts.some((t) => t.length === indented.length && t === indented)
}

/** The last segment of a resource URI, as a file name. */
function fileNameOf(uri) {
  const name = String(uri ?? '').split(/[/\\]/).pop()
  return name || 'resource'
}

/** A media type without its parameters (`audio/x-wav; codecs=1` → `audio/x-wav`), or `undefined` when it is not one. */
function bareMediaType(mimeType) {
  if (typeof mimeType !== 'string') return undefined
  const bare = mimeType.split(';')[0].trim().toLowerCase()
  return /^[a-z]+\/[^\s/]+$/.test(bare) ? bare : undefined
}

/** Whether `data` is base64 (what MCP's media carry); anything else stays in the result as it came. */
function isBase64(data) {
  return typeof data === 'string' && data.length % 4 !== 1 && /^[A-Za-z0-9+/_-]*={0,2}$/.test(data)
}

/**
 * A media item as the core's part, with what the client needs to get it back as it was
 * (`media`: the item's kind, media type and URI), or `null` when it cannot be stored.
 */
function mediaPart(kind, data, mimeType, uri) {
  const mediaType = bareMediaType(mimeType) ?? (kind === 'resource' ? 'application/octet-stream' : undefined)
  if (!mediaType || !isBase64(data)) return null
  const part = kind === 'image' ? { type: 'image', data, mediaType } : { type: 'file', data, mediaType, filename: kind === 'audio' ? 'audio' : fileNameOf(uri) }
  return { part, media: { kind, mimeType: typeof mimeType === 'string' ? mimeType : mediaType, ...(uri !== undefined ? { uri } : {}) } }
}

/** The text of a text item or an embedded text resource (a resource's text introduced by a line naming it), or `undefined`. */
function textOf(item) {
  if (item?.type === 'text' && typeof item.text === 'string') return item.text
  if (item?.type === 'resource' && typeof item.resource?.text === 'string') {
    const { uri, mimeType, text } = item.resource
    return `[resource: ${uri}${typeof mimeType === 'string' ? ` (${mimeType})` : ''}]\n${text}`
  }
  return undefined
}

/**
 * What of a tool result goes to the core: `parts` (the text items and embedded text
 * resources as one text, `structuredContent` as JSON unless it repeats a text, media with
 * `offloadMedia`), `media` (for each part, the media item it came from, if any), and
 * `kept`, the content items that stay in the result whatever happens. `null` when the
 * result has nothing to offload (a task's `CreateTaskResult`, no text).
 * @param {Record<string, unknown>} result
 * @param {boolean} offloadMedia
 */
export function splitToolResult(result, offloadMedia) {
  if (result === null || typeof result !== 'object') return null
  const structured = result.structuredContent
  const hasStructured = structured !== null && typeof structured === 'object'
  if (!Array.isArray(result.content) && !(hasStructured && result.content === undefined)) return null
  const texts = []
  const rawTexts = []
  const media = []
  const kept = []
  for (const item of result.content ?? []) {
    const text = textOf(item)
    if (text !== undefined) {
      texts.push(text)
      if (item.type === 'text') rawTexts.push(text)
      continue
    }
    let stored = null
    if (offloadMedia && (item?.type === 'image' || item?.type === 'audio')) stored = mediaPart(item.type, item.data, item.mimeType)
    else if (offloadMedia && item?.type === 'resource' && typeof item.resource?.blob === 'string') {
      stored = mediaPart('resource', item.resource.blob, item.resource.mimeType, item.resource.uri)
    }
    if (stored) media.push(stored)
    else kept.push(item) // resource_link, media without offloadMedia, anything newer: kept.
  }
  // The texts are one block: one reference, however many items they came in.
  const parts = texts.length > 0 ? [{ type: 'text', text: texts.join('\n') }] : []
  const origins = parts.map(() => undefined)
  if (hasStructured && !repeatsText(structured, rawTexts)) {
    parts.push({ type: 'json', json: structured })
    origins.push(undefined)
  }
  for (const { part, media: origin } of media) {
    parts.push(part)
    origins.push(origin)
  }
  return parts.length === 0 ? null : { parts, media: origins, kept }
}

/** Characters of a part list as the media rule counts them: text and base64 alike. */
export function partCharacters(parts) {
  let characters = 0
  for (const part of parts) {
    if (part.type === 'text') characters += part.text.length
    else if (part.type !== 'json' && typeof part.data === 'string') characters += part.data.length
  }
  return characters
}

/** Whether a part list carries media (the media rule applies only then). */
export const hasMedia = (parts) => parts.some((part) => part.type === 'image' || part.type === 'file')

/**
 * The result the client gets for an offloaded one: the preview and references (and one
 * placeholder per stored medium) as text items, then the items kept as they were; no
 * `structuredContent` (its tool's `outputSchema` is not shown to the client). Other
 * fields (`isError`, `_meta`) stay.
 * @param {Record<string, unknown>} result
 * @param {{ parts: Array<{ type: string, text?: string }> }} offloaded
 * @param {unknown[]} kept
 */
export function offloadedToolResult(result, offloaded, kept) {
  const { content: _content, structuredContent: _structured, ...rest } = result
  const replaced = offloaded.parts.filter((p) => p.type === 'text').map((p) => ({ type: 'text', text: p.text }))
  return { ...rest, content: [...replaced, ...kept] }
}

/** A stored medium as the content item it was (for the retrieval tool's answer). */
export function mediaItem(origin, bytes) {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  if (origin.kind === 'resource') return { type: 'resource', resource: { uri: origin.uri ?? 'resource', mimeType: origin.mimeType, blob: data } }
  return { type: origin.kind, data, mimeType: origin.mimeType }
}
