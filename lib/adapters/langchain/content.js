// A LangChain `ToolMessage`'s content as the core's content parts, and the core's
// replacement parts back as LangChain content. The content is a string or an array of
// content blocks: standard blocks (`text`, `image`/`audio`/`video`/`file`/`text-plain`
// with base64 `data`, a `url` or a `fileId`), the older `source_type` blocks, OpenAI's
// `image_url` and Anthropic's base64 `source`. Inline data (base64, or a `data:` URL) is
// stored; a block the core cannot store (a URL, a file id, a provider-specific block)
// stays in the message as it is.

/** The media block types of `@langchain/core` (standard and `source_type` blocks). */
const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'file', 'text-plain'])

/** A `data:<media type>;base64,<data>` URL, split. */
const DATA_URL = /^data:([a-z]+\/[^\s;,]+);base64,(.*)$/is

/**
 * How a tool result is handed to the core and read back: `content` for
 * `Offloader.offloadResult`, and `toMessageContent` for its replacement parts.
 * @typedef {object} CoreContent
 * @property {string | import('../../../core.d.ts').OffloadPart[]} content - text or content parts
 * @property {(parts: import('../../../core.d.ts').OffloadPart[]) => string | object[]} toMessageContent
 */

/** The media type of a block (`mimeType`, or `mime_type` of a `source_type` block). */
function mediaTypeOf(block) {
  const type = block.mimeType ?? block.mime_type
  return typeof type === 'string' ? type : undefined
}

/** A file name a block carries (`metadata.filename`/`name`/`title`, or `filename`/`title`). */
function fileNameOf(block) {
  const meta = block.metadata !== null && typeof block.metadata === 'object' ? block.metadata : {}
  for (const name of [meta.filename, meta.name, meta.title, block.filename, block.title]) {
    if (typeof name === 'string' && name) return name
  }
  return undefined
}

/**
 * One content block as a core part, or `undefined` when the core cannot store it (the
 * block is then kept in the message as it is).
 * @param {unknown} block
 */
function partOf(block) {
  if (block === null || typeof block !== 'object' || Array.isArray(block)) return undefined
  const { type } = block
  if ((type === 'text' || type === 'text-plain' || block.source_type === 'text') && typeof block.text === 'string' && block.data === undefined) {
    return { type: 'text', text: block.text }
  }
  if (type === 'image_url') {
    const url = typeof block.image_url === 'string' ? block.image_url : block.image_url?.url
    const inline = typeof url === 'string' ? DATA_URL.exec(url) : null
    return inline ? { type: 'image', data: inline[2], mediaType: inline[1] } : undefined
  }
  if (!MEDIA_TYPES.has(type)) return undefined
  let { data } = block
  let mediaType = mediaTypeOf(block)
  if (data === undefined) {
    // Inline data spelled otherwise: a `data:` URL as the block's `url`, or Anthropic's
    // `source: { type: 'base64', media_type, data }` (LangChain reads both as base64 data).
    const source = block.source !== null && typeof block.source === 'object' ? block.source : undefined
    const inline = typeof block.url === 'string' ? DATA_URL.exec(block.url) : null
    if (inline) [data, mediaType] = [inline[2], inline[1]]
    else if (source?.type === 'base64' && typeof source.data === 'string' && typeof source.media_type === 'string') {
      ;[data, mediaType] = [source.data, source.media_type]
    } else return undefined
    if (type === 'image') return { type: 'image', data, mediaType }
    const filename = fileNameOf(block)
    return { type: 'file', data, mediaType, ...(filename ? { filename } : {}) }
  }
  if ((typeof data !== 'string' && !(data instanceof Uint8Array)) || mediaType === undefined) return undefined
  if (block.source_type !== undefined && block.source_type !== 'base64') return undefined
  if (type === 'image') return { type: 'image', data, mediaType }
  const filename = fileNameOf(block)
  return { type: 'file', data, mediaType, ...(filename ? { filename } : {}) }
}

/** A core part the adapter did not hand in (none are expected), as a standard LangChain block. */
function blockOfPart(part) {
  if (part.type === 'text') return { type: 'text', text: part.text }
  if (part.url !== undefined) return { type: part.type, url: part.url }
  return { type: part.type, data: part.data, mimeType: part.mediaType }
}

/**
 * A ToolMessage's content for the core. A string is text, as the model would read it (a
 * tool's object result is already the compact JSON LangChain made of it: parsing it back
 * would stall the event loop for megabytes); an array of blocks becomes content parts,
 * each block the core cannot store standing in as a URL part (which the core keeps in
 * context) and coming back as the very block it was.
 * @param {unknown} content - `ToolMessage.content`
 * @returns {CoreContent | undefined} `undefined` when there is nothing the core could offload
 */
export function toCoreContent(content) {
  if (typeof content === 'string') return { content, toMessageContent: (parts) => messageContentOf(parts, new Map(), true) }
  if (!Array.isArray(content) || content.length === 0) return undefined
  /** Each part handed in, and the block it stands for. */
  const blockOf = new Map()
  let storable = 0
  const parts = content.map((block) => {
    const part = partOf(block)
    if (part) storable++
    const handed = part ?? { type: 'file', url: 'about:blank' }
    blockOf.set(handed, block)
    return handed
  })
  if (storable === 0) return undefined
  return { content: parts, toMessageContent: (replacement) => messageContentOf(replacement, blockOf, false) }
}

/**
 * The core's replacement parts as a ToolMessage's content: one string when the result was
 * a string, else blocks (a kept block is the original block).
 */
function messageContentOf(parts, blockOf, asString) {
  if (asString && parts.every((p) => p.type === 'text')) return parts.map((p) => p.text).join('\n')
  return parts.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : (blockOf.get(part) ?? blockOfPart(part))))
}
