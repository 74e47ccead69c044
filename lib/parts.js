// A tool result as any framework hands it to the core: a string, JSON-serialisable
// data, or an array of content parts (`text`, `json`, `image`, `file`); made into the engine's
// plain blocks (see ./content.js), and the engine's replacement blocks made back into parts.
import { isText } from './content.js'
import { describe } from './numbers.js'

/** The part types the core reads; an array of anything else is data. */
const PART_TYPES = new Set(['text', 'json', 'image', 'file'])

/** The part each inline block came from (kept in the conversation as it was given). */
const PART_OF = new WeakMap()

/**
 * Whether an item has a part's shape: a text part's `text` is a string, a JSON part
 * carries `json`, an image or file part carries `data` or a `url`. Data that merely has a `type` of the same name (rich
 * text `{ type: 'text', text: { content } }`, an `{ type: 'image', image_url }` block)
 * has not.
 */
function partShaped(p) {
  if (p === null || typeof p !== 'object' || Array.isArray(p) || !PART_TYPES.has(p.type)) return false
  if (p.type === 'text') return typeof p.text === 'string'
  if (p.type === 'json') return p.json !== undefined
  return p.data !== undefined || p.url !== undefined
}

/** Whether `value` is an array of content parts (every item part-shaped), not data. */
export function isPartList(value) {
  return Array.isArray(value) && value.length > 0 && value.every(partShaped)
}

/** Whether `text` is base64 (or base64url), with optional padding and whitespace between its characters. */
function isBase64(text) {
  const compact = text.replace(/[\t\n\r ]/g, '')
  return compact.length % 4 !== 1 && /^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) && (!compact.includes('=') || compact.length % 4 === 0)
}

/** The bytes of a part's `data`: bytes as they are, a string as base64, anything else an error. */
function bytesOf(part, index) {
  const { data } = part
  if (data instanceof Uint8Array) return data
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  // Base64 or base64url, line breaks allowed; anything else (a data URL, text) would be
  // decoded into other bytes without a word, so it is refused.
  if (typeof data === 'string' && isBase64(data)) return new Uint8Array(Buffer.from(data, 'base64'))
  const got = typeof data === 'string' ? `a string that is not base64 (${JSON.stringify(data.slice(0, 24))}${data.length > 24 ? '…' : ''})` : describe(data)
  throw new TypeError(`content[${index}].data must be bytes (a Uint8Array) or a base64 string, got ${got}`)
}

/** The subtype of a media type (`image/png` → `png`), checked. */
function formatOf(part, index, kind) {
  const { mediaType } = part
  if (typeof mediaType !== 'string' || !/^[a-z]+\/[^\s/]+$/i.test(mediaType)) {
    throw new TypeError(`content[${index}].mediaType must be a media type such as '${kind}', got ${describe(mediaType)}`)
  }
  return mediaType.slice(mediaType.indexOf('/') + 1).toLowerCase()
}

/** One part as an engine block. */
function partToBlock(part, index) {
  switch (part.type) {
    case 'text':
      if (typeof part.text !== 'string') throw new TypeError(`content[${index}].text must be a string, got ${describe(part.text)}`)
      return { type: 'textBlock', text: part.text }
    case 'json':
      return jsonBlockOf(part.json, `content[${index}].json must be JSON-serialisable data`)
    case 'image': {
      const block =
        part.data === undefined && typeof part.url === 'string'
          ? { type: 'imageBlock', format: 'url', source: { type: 'imageSourceUrl', url: part.url } }
          : { type: 'imageBlock', format: formatOf(part, index, 'image/png'), source: { type: 'imageSourceBytes', bytes: bytesOf(part, index) } }
      PART_OF.set(block, part)
      return block
    }
    default: {
      const block =
        part.data === undefined && typeof part.url === 'string'
          ? { type: 'documentBlock', format: 'url', name: part.filename ?? part.url, source: { type: 'documentSourceUrl', url: part.url } }
          : {
              type: 'documentBlock',
              format: formatOf(part, index, 'application/pdf'),
              name: typeof part.filename === 'string' && part.filename ? part.filename : 'file',
              source: { type: 'documentSourceBytes', bytes: bytesOf(part, index) },
            }
      PART_OF.set(block, part)
      return block
    }
  }
}

/**
 * The engine's blocks for a tool result: a string is one text block, an array of
 * content parts is one block per part, and any other value is data (one JSON block,
 * stored and previewed as JSON with two-space indents). Throws a `TypeError` naming the
 * problem for a part that is not well formed or data that is not JSON-serialisable.
 * @param {unknown} content
 */
export function toBlocks(content) {
  if (typeof content === 'string') return [{ type: 'textBlock', text: content }]
  if (isPartList(content)) return content.map(partToBlock)
  return [jsonBlockOf(content, 'content must be a string, content parts or JSON-serialisable data')]
}

/** A JSON block of `value`, checked to be JSON-serialisable (`rule` is the error's start). */
function jsonBlockOf(value, rule) {
  let text
  try {
    text = JSON.stringify(value)
  } catch (err) {
    throw new TypeError(`${rule}: ${err?.message ?? err}`)
  }
  if (text === undefined) throw new TypeError(`${rule}, got ${describe(value)}`)
  return { type: 'jsonBlock', json: value }
}

/** The engine's replacement blocks as content parts: text as text parts, inline blocks as the parts they were. */
export function toParts(blocks) {
  return blocks.map((block) => (isText(block) ? { type: 'text', text: block.text } : (PART_OF.get(block) ?? block)))
}
