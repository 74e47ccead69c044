// Content blocks as the engine handles them, told apart by their `type` (`textBlock`,
// `jsonBlock`, `imageBlock`, `videoBlock`, `documentBlock`), as the SDK's block classes
// and their plain-object forms both carry it: no agent framework is imported here. The
// bytes and content type a block is stored with, how stored content comes back on full
// retrieval, and the media placeholders after a preview.

/** Whether a block is a text block. */
export const isText = (block) => block?.type === 'textBlock'
/** Whether a block is a JSON block. */
export const isJson = (block) => block?.type === 'jsonBlock'

/**
 * A block the engine makes (a placeholder, the media of a full retrieval): plain data
 * with a block's `type`, told by its class from parsed JSON that happens to look like a
 * block, so that an adapter converts these and nothing else.
 */
export class EngineBlock {
  /** @param {{ type: string }} fields */
  constructor(fields) {
    Object.assign(this, fields)
  }
}

/** A text block the engine makes (what it puts in a conversation; adapters convert it). */
export class EngineTextBlock {
  type = 'textBlock'
  /** @param {string} text */
  constructor(text) {
    this.text = text
  }
}

/** A text block the engine makes. */
export const textBlock = (text) => new EngineTextBlock(text)

/** Whether a block is previewed as text: a non-empty text block or a JSON block. */
export function isTextual(block) {
  return (isText(block) && Boolean(block.text)) || isJson(block)
}

/** Whether a block is an image, video or document. */
export function isMedia(block) {
  const type = block?.type
  return type === 'imageBlock' || type === 'videoBlock' || type === 'documentBlock'
}

/**
 * The bytes a media block carries (document text as UTF-8; a document made of text
 * blocks as their text, one per line), or `undefined` for blocks that only point at
 * their content (S3 locations, URLs).
 */
export function getBytes(block) {
  const type = block?.type
  if (type === 'imageBlock' && block.source?.type === 'imageSourceBytes') return block.source.bytes
  if (type === 'videoBlock' && block.source?.type === 'videoSourceBytes') return block.source.bytes
  if (type === 'documentBlock') {
    if (block.source.type === 'documentSourceBytes') return block.source.bytes
    if (block.source.type === 'documentSourceText' || block.source.type === 'documentSourceContentBlock') {
      // Encoded once per block, however often its bytes are asked for (size, budget, store).
      let bytes = ENCODED.get(block)
      if (!bytes) {
        const text = block.source.type === 'documentSourceText' ? block.source.text : block.source.content.map((part) => part.text).join('\n')
        ENCODED.set(block, (bytes = new TextEncoder().encode(text)))
      }
      return bytes
    }
  }
  return undefined
}

/** The UTF-8 of document blocks made of text, by block. */
const ENCODED = new WeakMap()

/**
 * The content type a media block is stored with (`image/png`, `video/mp4`,
 * `application/pdf`; a document made of text blocks is `text/plain`, so it can be searched).
 */
export function mediaContentType(block) {
  if (block.type === 'imageBlock') return `image/${block.format}`
  if (block.type === 'videoBlock') return `video/${block.format}`
  if (block.type === 'documentBlock' && block.source.type === 'documentSourceContentBlock') return 'text/plain'
  return `application/${block.format}`
}

/**
 * Whether a block stays in the conversation as it is when its result is offloaded: a
 * media block that only points at its content (an S3 location or a URL: small, and the
 * model can still read what it points at), or a block of a kind the engine does not
 * store. Nothing of a result is ever dropped.
 */
export function staysInline(block) {
  if (isText(block) || isJson(block)) return false
  return !isMedia(block) || getBytes(block) === undefined
}

/**
 * What a full retrieval returns for stored content: text for `text/*`, parsed JSON (or
 * its text; only its text with `parseJson: false`), plain image/video/document blocks
 * for media, else text (the SDK's rules).
 */
export function decodeStoredContent(content, contentType, reference, parseJson = true) {
  if (contentType.startsWith('text/')) return new TextDecoder().decode(content)
  if (contentType === 'application/json') {
    const text = new TextDecoder().decode(content)
    if (!parseJson) return text
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  const format = contentType.split('/').pop()
  if (contentType.startsWith('image/')) {
    return new EngineBlock({ type: 'imageBlock', format, source: { type: 'imageSourceBytes', bytes: content } })
  }
  if (contentType.startsWith('video/')) {
    return new EngineBlock({ type: 'videoBlock', format, source: { type: 'videoSourceBytes', bytes: content } })
  }
  if (contentType.startsWith('application/')) {
    const source = { type: 'documentSourceBytes', bytes: content }
    return new EngineBlock({ type: 'documentBlock', format, name: reference, source })
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(content)
}

/**
 * One placeholder text block per stored media block, as the SDK adds after the preview
 * (`[image: png, 1234 bytes | ref: <reference>]`, or with `missing` when not stored),
 * and the blocks that stay inline ({@link staysInline}) themselves, in their order.
 */
export function mediaPlaceholders(content, references, missing) {
  const out = []
  for (let i = 0; i < content.length; i++) {
    const block = content[i]
    if (isText(block) || isJson(block)) continue
    if (staysInline(block)) {
      out.push(block)
      continue
    }
    const ref = references[i]?.ref ?? ''
    const bytes = getBytes(block)
    const size = bytes ? bytes.length : 0
    let label
    if (block.type === 'imageBlock') label = `image: ${block.format}`
    else if (block.type === 'videoBlock') label = `video: ${block.format}`
    else if (block.type === 'documentBlock') label = `document: ${block.format}, ${block.name}`
    if (!label) continue
    const suffix = ref ? ` | ref: ${ref}` : missing ? ` | ${missing}` : ''
    out.push(textBlock(`[${label}, ${size} bytes${suffix}]`))
  }
  return out
}

/**
 * The text of every text and JSON block by block index: text as is, JSON pretty-printed
 * with two spaces (what is stored and previewed, as in the SDK).
 * @returns {Map<number, string>}
 */
export function blockTexts(content) {
  const texts = new Map()
  content.forEach((block, i) => {
    if (isText(block) && block.text) texts.set(i, block.text)
    else if (isJson(block)) texts.set(i, JSON.stringify(block.json, null, 2) ?? '')
  })
  return texts
}
