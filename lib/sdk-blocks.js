// The Strands SDK's content block classes at the edge of the plugin: what `offload()`
// accepts as content, and the engine's plain blocks (see ./content.js) made into the
// SDK's classes before they reach an agent's conversation or its retrieval tool.
import {
  DocumentBlock,
  ImageBlock,
  JsonBlock,
  TextBlock,
  VideoBlock,
  toolResultContentFromData,
} from '@strands-agents/sdk'
import { EngineBlock, EngineTextBlock } from './content.js'

/** SDK content blocks from what `offload()` accepts: a string, a block, or an array of blocks. */
export function toContentBlocks(content) {
  if (typeof content === 'string') return [new TextBlock(content)]
  const list = Array.isArray(content) ? content : [content]
  return list.map((block) => {
    if (block instanceof TextBlock || block instanceof JsonBlock) return block
    if (block instanceof ImageBlock || block instanceof VideoBlock || block instanceof DocumentBlock) return block
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
 * The SDK's block for one of the engine's plain blocks (a text placeholder, a media
 * block of a full retrieval); anything else (the SDK's own blocks, strings, parsed
 * JSON) as it is.
 */
export function toSdkBlock(block) {
  if (block instanceof EngineTextBlock) return new TextBlock(block.text)
  if (!(block instanceof EngineBlock)) return block
  switch (block.type) {
    case 'textBlock':
      return new TextBlock(block.text)
    case 'imageBlock':
      return new ImageBlock({ format: block.format, source: { bytes: block.source.bytes } })
    case 'videoBlock':
      return new VideoBlock({ format: block.format, source: { bytes: block.source.bytes } })
    case 'documentBlock':
      return new DocumentBlock({ format: block.format, name: block.name, source: { bytes: block.source.bytes } })
    default:
      return block
  }
}
