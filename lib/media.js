// Token estimates for image, video and document content blocks, used when the
// offloader counts with a native tokenizer (the SDK counts these blocks as zero).
//
// The rules, also listed in the README:
// - image with readable dimensions (PNG, JPEG, GIF, WebP headers): ceil(width x height / 750),
//   the per-pixel rate vision models document (about 1,600 tokens for a 1,092 x 1,092 image);
//   providers that downscale very large images charge less, so this errs on the high side;
// - image whose dimensions cannot be read: ceil(bytes / 75) (750 pixels per token at a
//   typical 0.1 byte per compressed pixel);
// - video: ceil(bytes / 500) (about 260 tokens per second at 1 Mbit/s);
// - document given as text (or text blocks), or as bytes in a text format (txt, md, csv, html, json, xml):
//   the text's exact token count;
// - other documents (pdf, doc, docx, xls, xlsx, ...): ceil(bytes / 40);
// - blocks that hold only a location (S3 or URL source): 0, nothing to measure.

/** Pixels per token for images. */
export const PIXELS_PER_IMAGE_TOKEN = 750
/** Bytes per token for images whose dimensions cannot be read. */
export const IMAGE_BYTES_PER_TOKEN = 75
/** Bytes per token for video. */
export const VIDEO_BYTES_PER_TOKEN = 500
/** Bytes per token for binary documents. */
export const DOCUMENT_BYTES_PER_TOKEN = 40
/** Document formats whose bytes are counted as UTF-8 text. */
const TEXT_DOCUMENT_FORMATS = new Set(['txt', 'md', 'csv', 'html', 'htm', 'json', 'xml', 'markdown', 'text'])

/**
 * Width and height of an image from its header, or `undefined` when the bytes are not
 * a PNG, JPEG, GIF or WebP image this function can read.
 * @param {Uint8Array} bytes
 * @returns {{ width: number, height: number } | undefined}
 */
export function imageDimensions(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < 10) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const at = (i) => bytes[i]
  // PNG: signature, then the IHDR chunk with big-endian width and height.
  if (at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47 && bytes.length >= 24) {
    return positive(view.getUint32(16), view.getUint32(20))
  }
  // GIF: "GIF87a"/"GIF89a", then little-endian 16-bit width and height.
  if (at(0) === 0x47 && at(1) === 0x49 && at(2) === 0x46) {
    return positive(view.getUint16(6, true), view.getUint16(8, true))
  }
  // JPEG: walk the markers up to a start-of-frame segment.
  if (at(0) === 0xff && at(1) === 0xd8) return jpegDimensions(bytes, view)
  // WebP: RIFF container with a VP8, VP8L or VP8X chunk.
  if (bytes.length >= 30 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') {
    const chunk = ascii(bytes, 12, 4)
    if (chunk === 'VP8 ') return positive(view.getUint16(26, true) & 0x3fff, view.getUint16(28, true) & 0x3fff)
    if (chunk === 'VP8L' && at(20) === 0x2f) {
      const bits = view.getUint32(21, true)
      return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1)
    }
    if (chunk === 'VP8X') {
      const width = 1 + (at(24) | (at(25) << 8) | (at(26) << 16))
      const height = 1 + (at(27) | (at(28) << 8) | (at(29) << 16))
      return positive(width, height)
    }
  }
  return undefined
}

function ascii(bytes, start, length) {
  return String.fromCharCode(...bytes.subarray(start, start + length))
}

function positive(width, height) {
  return width > 0 && height > 0 ? { width, height } : undefined
}

/** Dimensions from the first JPEG start-of-frame marker (SOF0-SOF15 except DHT/JPG/DAC). */
function jpegDimensions(bytes, view) {
  let i = 2
  while (i + 9 < bytes.length) {
    if (bytes[i] !== 0xff) return undefined
    const marker = bytes[i + 1]
    if (marker === 0xff) {
      i += 1
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2
      continue
    }
    const length = view.getUint16(i + 2)
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) return positive(view.getUint16(i + 7), view.getUint16(i + 5))
    if (length < 2) return undefined
    i += 2 + length
  }
  return undefined
}

/**
 * The estimated tokens of one media block (an SDK ImageBlock, VideoBlock or
 * DocumentBlock, or their plain-object forms), by the rules at the top of this file.
 * @param {{ type?: string, format?: string, source?: any }} block
 * @param {(text: string) => number | Promise<number>} countText - token count of a text
 * @returns {Promise<number>}
 */
export async function mediaTokens(block, countText) {
  const source = block?.source
  if (!source) return 0
  const kind = mediaKind(block)
  if (kind === 'image') {
    const bytes = source.bytes
    if (!(bytes instanceof Uint8Array)) return 0
    const size = imageDimensions(bytes)
    return size
      ? Math.ceil((size.width * size.height) / PIXELS_PER_IMAGE_TOKEN)
      : Math.ceil(bytes.length / IMAGE_BYTES_PER_TOKEN)
  }
  if (kind === 'video') {
    return source.bytes instanceof Uint8Array ? Math.ceil(source.bytes.length / VIDEO_BYTES_PER_TOKEN) : 0
  }
  if (kind === 'document') {
    if (typeof source.text === 'string') return countText(source.text)
    if (Array.isArray(source.content)) {
      let sum = 0
      for (const part of source.content) if (typeof part?.text === 'string') sum += await countText(part.text)
      return sum
    }
    const bytes = source.bytes
    if (!(bytes instanceof Uint8Array)) return 0
    if (TEXT_DOCUMENT_FORMATS.has(String(block.format).toLowerCase())) {
      return countText(new TextDecoder().decode(bytes))
    }
    return Math.ceil(bytes.length / DOCUMENT_BYTES_PER_TOKEN)
  }
  return 0
}

/** 'image' | 'video' | 'document' | undefined for a content block. */
export function mediaKind(block) {
  switch (block?.type) {
    case 'imageBlock':
      return 'image'
    case 'videoBlock':
      return 'video'
    case 'documentBlock':
      return 'document'
    default:
      return undefined
  }
}
