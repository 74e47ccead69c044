// MCP tool results and the core's content parts: which parts of a `CallToolResult` are
// offloaded (its text, embedded text resources and `structuredContent`; images, audio and
// binary resources only with `offloadMedia`), and the result the client gets instead.

/**
 * Whether `structuredContent` only repeats a text item: the serialised JSON a tool
 * should also send as text (compact or indented), or a single string field holding a
 * text item's text (as the reference filesystem server sends a file twice). What is
 * repeated is stored once, as the text.
 */
function repeatsText(structured, texts) {
  if (texts.length === 0) return false
  const values = Object.values(structured)
  if (values.length === 1 && typeof values[0] === 'string' && texts.includes(values[0])) return true
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

/** The core's part for one content item, or `null` when the item stays in the result as it is. */
function partOf(item, offloadMedia) {
  switch (item?.type) {
    case 'text':
      return typeof item.text === 'string' ? { type: 'text', text: item.text } : null
    case 'resource': {
      const resource = item.resource
      if (typeof resource?.text === 'string') return { type: 'text', text: resource.text }
      if (offloadMedia && typeof resource?.blob === 'string') {
        return { type: 'file', data: resource.blob, mediaType: resource.mimeType || 'application/octet-stream', filename: fileNameOf(resource.uri) }
      }
      return null
    }
    case 'image':
      return offloadMedia && typeof item.data === 'string' ? { type: 'image', data: item.data, mediaType: item.mimeType } : null
    case 'audio':
      return offloadMedia && typeof item.data === 'string' ? { type: 'file', data: item.data, mediaType: item.mimeType, filename: 'audio' } : null
    default:
      // resource_link and anything newer: kept.
      return null
  }
}

/**
 * What of a tool result goes to the core: `parts` (text items, embedded text resources,
 * `structuredContent` as JSON unless it repeats a text, media with `offloadMedia`), and
 * `kept`, the content items that stay in the result whatever happens. `null` when the
 * result has nothing to offload (a task's `CreateTaskResult`, no text).
 * @param {Record<string, unknown>} result
 * @param {boolean} offloadMedia
 */
export function splitToolResult(result, offloadMedia) {
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) return null
  const parts = []
  const kept = []
  for (const item of result.content) {
    const part = partOf(item, offloadMedia)
    if (part) parts.push(part)
    else kept.push(item)
  }
  const structured = result.structuredContent
  if (structured !== null && typeof structured === 'object') {
    const texts = parts.filter((p) => p.type === 'text').map((p) => p.text)
    if (!repeatsText(structured, texts)) parts.push({ type: 'json', json: structured })
  }
  return parts.length === 0 ? null : { parts, kept }
}

/** Base64 characters of a part list's media: what they would cost as text. */
export function mediaCharacters(parts) {
  let characters = 0
  for (const part of parts) if (part.type !== 'text' && part.type !== 'json' && typeof part.data === 'string') characters += part.data.length
  return characters
}

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
