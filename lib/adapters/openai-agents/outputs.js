// What an OpenAI Agents SDK function tool returns, as the core reads it, and the
// core's replacement as the SDK sends it to the model. A tool returns a string, any
// other value (the SDK sends it as JSON text), or structured outputs: one item or an
// array of `{ type: 'text', text }`, `{ type: 'image', image }` and `{ type: 'file', file }`
// (the shapes the SDK's `getToolCallOutputItem` accepts).

/** The SDK's structured output item each core part was made from (given back when the core keeps a part). */
const ITEM_OF = new WeakMap()

const isRecord = (value) => value !== null && typeof value === 'object'
const nonEmpty = (value) => typeof value === 'string' && value.length > 0
const isBytes = (value) => value instanceof Uint8Array && value.length > 0

/** A base64 data URL (`data:image/png;base64,...`) as `{ mediaType, data }`, else `undefined`. */
function parseDataUrl(value) {
  if (typeof value !== 'string' || !value.startsWith('data:')) return undefined
  const match = /^data:([a-z]+\/[^\s;,/]+)(?:;[^,]*)?;base64,/i.exec(value)
  return match ? { mediaType: match[1], data: value.slice(match[0].length) } : undefined
}

/** The media type an item or its source names (`mediaType`, or the SDK's alias `mimeType`). */
function mediaTypeOf(...candidates) {
  for (const c of candidates) {
    if (!isRecord(c)) continue
    if (nonEmpty(c.mediaType)) return c.mediaType
    if (nonEmpty(c.mimeType)) return c.mimeType
  }
  return undefined
}

/**
 * Inline data as a core part's `{ data, mediaType }`: a data URL, or base64 / bytes with
 * a media type. `undefined` when the data cannot be stored as it is (no media type).
 */
function inline(data, mediaType) {
  const fromUrl = parseDataUrl(data)
  if (fromUrl) return fromUrl
  if ((nonEmpty(data) || isBytes(data)) && mediaType) return { data, mediaType }
  return undefined
}

/**
 * The core part for one image item: its inline data (stored when the result is
 * offloaded), or a part the core keeps in context as it is (a URL, a file id, data
 * without a media type). `null` when the SDK would not read the item as an image either.
 */
function imagePart(item) {
  const { image } = item
  let source
  let kept = false
  if (nonEmpty(image)) {
    source = inline(image)
    kept = !source
  } else if (isRecord(image)) {
    if (nonEmpty(image.url)) kept = true
    else if (nonEmpty(image.data) || isBytes(image.data)) {
      source = inline(image.data, mediaTypeOf(image, item))
      kept = !source
    } else kept = nonEmpty(image.fileId) || nonEmpty(image.id)
  }
  if (!source && !kept) {
    if (nonEmpty(item.imageUrl) || nonEmpty(item.fileId)) kept = true
    else if (nonEmpty(item.data) || isBytes(item.data)) {
      source = inline(item.data, mediaTypeOf(item))
      kept = !source
    }
  }
  if (source) return { type: 'image', data: source.data, mediaType: source.mediaType }
  return kept ? { type: 'image', url: 'image' } : null
}

/** The core part for one file item, as {@link imagePart} does for images. */
function filePart(item) {
  const { file } = item
  let source
  let filename
  let kept = false
  if (nonEmpty(file)) {
    source = inline(file)
    kept = !source
  } else if (isRecord(file)) {
    if ('data' in file && file.data !== undefined) {
      // The SDK reads inline file data only with both a media type and a file name.
      if ((nonEmpty(file.data) || isBytes(file.data)) && nonEmpty(file.mediaType) && nonEmpty(file.filename)) {
        source = inline(file.data, file.mediaType)
        filename = file.filename
        kept = !source
      }
    } else kept = nonEmpty(file.url) || nonEmpty(file.id) || nonEmpty(file.fileId)
  }
  if (!source && !kept) {
    if ((nonEmpty(item.fileData) || isBytes(item.fileData)) && nonEmpty(item.mediaType) && nonEmpty(item.filename)) {
      source = inline(item.fileData, item.mediaType)
      filename = item.filename
      kept = !source
    } else kept = nonEmpty(item.fileUrl) || nonEmpty(item.fileId)
  }
  if (source) return { type: 'file', data: source.data, mediaType: source.mediaType, ...(filename ? { filename } : {}) }
  return kept ? { type: 'file', url: 'file' } : null
}

/** The core part for one structured output item, or `null` when the SDK would not read it as one. */
function partOf(item) {
  if (!isRecord(item) || Array.isArray(item)) return null
  let part = null
  if (item.type === 'text') part = typeof item.text === 'string' ? { type: 'text', text: item.text } : null
  else if (item.type === 'image') part = imagePart(item)
  else if (item.type === 'file') part = filePart(item)
  if (part) ITEM_OF.set(part, item)
  return part
}

/**
 * A tool's output as the core's `content`, with how to give the replacement back:
 * - `kind: 'text'`: a string;
 * - `kind: 'parts'`: structured outputs (one item or a non-empty array of them), as
 *   core parts;
 * - `kind: 'data'`: any other JSON value (the SDK sends it as JSON text);
 * - `kind: 'none'`: nothing to offload (`undefined`, `null`, bytes, a function: the SDK
 *   shows those in its own way).
 * @param {unknown} output
 * @returns {{ kind: 'text' | 'parts' | 'data' | 'none', content?: unknown }}
 */
export function toCoreContent(output) {
  if (typeof output === 'string') return { kind: 'text', content: output }
  if (!isRecord(output) || ArrayBuffer.isView(output) || output instanceof ArrayBuffer) return { kind: 'none' }
  const items = Array.isArray(output) ? output : [output]
  if (items.length > 0) {
    const parts = []
    for (const item of items) {
      const part = partOf(item)
      if (!part) break
      parts.push(part)
    }
    if (parts.length === items.length) return { kind: 'parts', content: parts }
  }
  return { kind: 'data', content: output }
}

/**
 * The core's replacement as the tool's output: its text for a string or data, and
 * structured outputs for structured outputs (text items, then each part the core kept,
 * as the tool returned it).
 * @param {{ kind: string }} shape - what {@link toCoreContent} answered
 * @param {{ text: string, parts: Array<{ type: string, text?: string }> }} offloaded
 */
export function fromCoreResult(shape, offloaded) {
  if (shape.kind !== 'parts') return offloaded.text
  return offloaded.parts.map((part) => ITEM_OF.get(part) ?? (part.type === 'text' ? { type: 'text', text: part.text } : part))
}
