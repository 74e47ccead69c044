// SDK content blocks as the plugin handles them: the bytes and content type a block is
// stored with, how stored content comes back as blocks on full retrieval, the media
// placeholders after a preview, and what `offload()` accepts as content.
import {
  DocumentBlock,
  ImageBlock,
  JsonBlock,
  TextBlock,
  VideoBlock,
  toolResultContentFromData,
} from '@strands-agents/sdk'

/** Whether a block is previewed as text: a non-empty text block or a JSON block. */
export function isTextual(block) {
  return (block instanceof TextBlock && Boolean(block.text)) || block instanceof JsonBlock
}

/** Whether a block is an image, video or document. */
export function isMedia(block) {
  return block instanceof ImageBlock || block instanceof VideoBlock || block instanceof DocumentBlock
}

/**
 * The bytes a media block carries (document text as UTF-8; a document made of text
 * blocks as their text, one per line), or `undefined` for blocks that only point at
 * their content (S3 locations, URLs).
 */
export function getBytes(block) {
  if (block instanceof ImageBlock && block.source.type === 'imageSourceBytes') return block.source.bytes
  if (block instanceof VideoBlock && block.source.type === 'videoSourceBytes') return block.source.bytes
  if (block instanceof DocumentBlock) {
    if (block.source.type === 'documentSourceBytes') return block.source.bytes
    if (block.source.type === 'documentSourceText') return new TextEncoder().encode(block.source.text)
    if (block.source.type === 'documentSourceContentBlock') {
      return new TextEncoder().encode(block.source.content.map((part) => part.text).join('\n'))
    }
  }
  return undefined
}

/**
 * The content type a media block is stored with (`image/png`, `video/mp4`,
 * `application/pdf`; a document made of text blocks is `text/plain`, so it can be searched).
 */
export function mediaContentType(block) {
  if (block instanceof ImageBlock) return `image/${block.format}`
  if (block instanceof VideoBlock) return `video/${block.format}`
  if (block instanceof DocumentBlock && block.source.type === 'documentSourceContentBlock') return 'text/plain'
  return `application/${block.format}`
}

/**
 * Whether a block stays in the conversation as it is when its result is offloaded: a
 * media block that only points at its content (an S3 location or a URL: small, and the
 * model can still read what it points at), or a block of a kind the plugin does not
 * store. Nothing of a result is ever dropped.
 */
export function staysInline(block) {
  if (block instanceof TextBlock || block instanceof JsonBlock) return false
  return !isMedia(block) || getBytes(block) === undefined
}

/**
 * What a full retrieval returns for stored content: text for `text/*`, parsed JSON (or
 * its text), image/video/document blocks for media, else text (the SDK's rules).
 */
export function decodeStoredContent(content, contentType, reference) {
  if (contentType.startsWith('text/')) return new TextDecoder().decode(content)
  if (contentType === 'application/json') {
    const text = new TextDecoder().decode(content)
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  if (contentType.startsWith('image/')) {
    return new ImageBlock({ format: contentType.split('/').pop(), source: { bytes: content } })
  }
  if (contentType.startsWith('video/')) {
    return new VideoBlock({ format: contentType.split('/').pop(), source: { bytes: content } })
  }
  if (contentType.startsWith('application/')) {
    return new DocumentBlock({ format: contentType.split('/').pop(), name: reference, source: { bytes: content } })
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
    if (block instanceof TextBlock || block instanceof JsonBlock) continue
    if (staysInline(block)) {
      out.push(block)
      continue
    }
    const ref = references[i]?.ref ?? ''
    const bytes = getBytes(block)
    const size = bytes ? bytes.length : 0
    let label
    if (block instanceof ImageBlock) label = `image: ${block.format}`
    else if (block instanceof VideoBlock) label = `video: ${block.format}`
    else if (block instanceof DocumentBlock) label = `document: ${block.format}, ${block.name}`
    if (!label) continue
    const suffix = ref ? ` | ref: ${ref}` : missing ? ` | ${missing}` : ''
    out.push(new TextBlock(`[${label}, ${size} bytes${suffix}]`))
  }
  return out
}

/** SDK content blocks from what `offload()` accepts: a string, a block, or an array of blocks. */
export function toContentBlocks(content) {
  if (typeof content === 'string') return [new TextBlock(content)]
  const list = Array.isArray(content) ? content : [content]
  return list.map((block) => {
    if (block instanceof TextBlock || block instanceof JsonBlock) return block
    if (isMedia(block)) return block
    if (typeof block === 'string') return new TextBlock(block)
    if (block && typeof block === 'object') {
      try {
        // Plain data (`{ text }`, `{ json }`, `{ image }`, `{ video }`, `{ document }`), as the SDK reads it.
        return toolResultContentFromData(block)
      } catch {
        // Reported below.
      }
    }
    throw new TypeError('offload() content must be a string, or text/JSON/image/video/document blocks or their data')
  })
}

/**
 * The text of every text and JSON block by block index: text as is, JSON pretty-printed
 * with two spaces (what is stored and previewed, as in the SDK).
 * @returns {Map<number, string>}
 */
export function blockTexts(content) {
  const texts = new Map()
  content.forEach((block, i) => {
    if (block instanceof TextBlock && block.text) texts.set(i, block.text)
    else if (block instanceof JsonBlock) texts.set(i, JSON.stringify(block.json, null, 2) ?? '')
  })
  return texts
}
