// Storing the blocks of an offloaded result: each block's bytes and content type, and the
// description the preview lists next to its reference. Native storages take text already
// in native memory, or UTF-8 already encoded by a native preview, without another copy;
// any other storage gets bytes.
//
// Every native store is requested synchronously when `storeBlock` is called (before its
// first `await`), so blocks stored with `Promise.all` are numbered in block order, as the
// SDK numbers them.
import { DocumentBlock, JsonBlock, TextBlock } from '@strands-agents/sdk'
import { getBytes, isMedia, mediaContentType, staysInline } from './content.js'
import { asUint8Array, toNativeText } from './native.js'
import { logger } from './sdk.js'
import { PLUGIN_VIEW, nativeFor } from './storage/native-backed.js'
import { storeContent } from './storage/unified.js'

/**
 * Hands every text (by block index) to native memory, in order.
 * @param {Map<number, string>} texts
 * @returns {Promise<Map<number, object>>}
 */
export async function transferTexts(texts) {
  const nativeTexts = new Map()
  for (const [i, text] of texts) nativeTexts.set(i, await toNativeText(text))
  return nativeTexts
}

/** Calls a native store method now, or its worker-thread form when it cannot run inline. */
async function storeNatively(storage, nativeStore, method, key, payload, contentType) {
  const args = [key, payload, contentType, storage[PLUGIN_VIEW]]
  return nativeStore[`${method}Now`](...args) ?? (await nativeStore[method](...args))
}

/** The description of a stored text or JSON block. */
function textDescription(block, byteLength) {
  return block instanceof TextBlock
    ? `text, ${block.text.length.toLocaleString()} chars`
    : `json, ${byteLength.toLocaleString()} bytes`
}

/**
 * Stores one block under `key`. A text or JSON block is stored from `encoded` (its
 * UTF-8 from a native preview) when given, else from `nativeText` (its text in native
 * memory) when the storage is native, else from `text` encoded here.
 * @returns {Promise<{ ref: string, contentType: string, description: string }>} -
 *   `ref` is empty for blocks that hold nothing to store (S3 or URL sources).
 */
export async function storeBlock(storage, block, key, { text, nativeText, encoded }) {
  if ((block instanceof TextBlock && block.text) || block instanceof JsonBlock) {
    const contentType = block instanceof TextBlock ? 'text/plain' : 'application/json'
    let ref
    let byteLength
    const nativeStore = nativeFor(storage, 'store')
    if (encoded) {
      byteLength = encoded.byteLength
      ref =
        typeof nativeStore?.storeEncoded === 'function'
          ? (await storeNatively(storage, nativeStore, 'storeEncoded', key, encoded, contentType)).reference
          : await storeContent(storage, key, asUint8Array(encoded.toBuffer()), contentType)
    } else if (nativeText && nativeStore) {
      const outcome = await storeNatively(storage, nativeStore, 'storeText', key, nativeText, contentType)
      ;({ reference: ref, byteLength } = outcome)
    } else {
      const bytes = new TextEncoder().encode(text)
      byteLength = bytes.length
      ref = await storeContent(storage, key, bytes, contentType)
    }
    return { ref, contentType, description: textDescription(block, byteLength) }
  }
  if (!isMedia(block)) {
    // An empty text block has nothing to store (as in the SDK); a block of another kind
    // stays in the conversation as it is.
    logger.warn('unsupported content block type encountered during offloading, skipping')
    return { ref: '', contentType: 'unknown', description: 'unknown block type' }
  }
  if (staysInline(block)) {
    // S3 locations and URLs stay in the conversation as they are.
    return { ref: '', contentType: mediaContentType(block), description: 'kept inline' }
  }
  const bytes = getBytes(block)
  const contentType = mediaContentType(block)
  const label = block instanceof DocumentBlock ? block.name : contentType
  const ref = await storeContent(storage, key, bytes, contentType)
  return { ref, contentType, description: `${label}, ${bytes.length.toLocaleString()} bytes` }
}
