// "Nothing destroyed": every content block of an offloaded result either stays in the
// conversation or is stored and referenced, whatever its source. (The SDK replaces a
// document made of text blocks, and any S3 or URL source, by a `0 bytes` placeholder
// with no reference: a documented divergence.)
import { describe, expect, it } from 'vitest'
import { ContextOffloader, InMemoryStorage } from '../index.js'
import { DocumentBlock, Driven, ImageBlock, TextBlock, VideoBlock, textOf } from './helpers/harness'

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0])
const S3 = { location: { uri: 's3://bucket/media/object' } }
const NOTES = Array.from({ length: 300 }, (_, i) => `note ${i}: ${i % 50 === 7 ? 'NEEDLE' : 'hay'}`)

function result() {
  return [
    new TextBlock('log line\n'.repeat(3000)),
    new ImageBlock({ format: 'png', source: { bytes: PNG } }),
    new ImageBlock({ format: 'png', source: { url: 'https://example.com/a.png' } }),
    new ImageBlock({ format: 'jpeg', source: S3 }),
    new VideoBlock({ format: 'mp4', source: { bytes: new Uint8Array(1234) } }),
    new VideoBlock({ format: 'mp4', source: S3 }),
    new DocumentBlock({ format: 'pdf', name: 'report', source: { bytes: new Uint8Array(4321) } }),
    new DocumentBlock({ format: 'txt', name: 'plain', source: { text: 'plain text document' } }),
    new DocumentBlock({ format: 'txt', name: 'notes', source: { content: NOTES.map((text) => ({ text })) } }),
    new DocumentBlock({ format: 'pdf', name: 'remote', source: S3 }),
  ]
}

describe('every source type of image, video and document', () => {
  it('is stored with its true size and a reference, or stays in the conversation', async () => {
    const d = new Driven(new ContextOffloader({ storage: new InMemoryStorage(), maxResultTokens: 100, previewTokens: 10 }))
    const original = result()
    const replaced = await d.offload(original)
    const blocks = replaced.content.map((b: any) => JSON.parse(JSON.stringify(b)))
    const texts = blocks.map((b: any) => b.text ?? null)
    const placeholder = (prefix: string) => texts.find((t: string | null) => t?.startsWith(prefix)) as string
    expect(placeholder('[image: png, 29 bytes | ref: ')).toBeDefined()
    expect(placeholder('[video: mp4, 1234 bytes | ref: ')).toBeDefined()
    expect(placeholder('[document: pdf, report, 4321 bytes | ref: ')).toBeDefined()
    expect(placeholder('[document: txt, plain, 19 bytes | ref: ')).toBeDefined()
    const notesBytes = new TextEncoder().encode(NOTES.join('\n')).length
    const notes = placeholder(`[document: txt, notes, ${notesBytes} bytes | ref: `)
    expect(notes).toBeDefined()
    // The S3 and URL blocks are still there, unchanged, in their order.
    const inline = blocks.filter((b: any) => !('text' in b))
    expect(inline).toEqual([original[2], original[3], original[5], original[9]].map((b) => JSON.parse(JSON.stringify(b))))
    // No `0 bytes` placeholder: nothing was dropped.
    expect(texts.filter((t: string | null) => t?.includes(' 0 bytes'))).toEqual([])

    // The document made of text blocks is stored as text: it can be searched.
    const ref = /\| ref: (\S+)\]$/.exec(notes)![1]
    const found = textOf(await d.retrieve({ reference: ref, pattern: 'NEEDLE' }))
    expect(found).toMatch(/^\[6 matches for \/NEEDLE\/\]/)
    const full = await d.retrieve({ reference: ref })
    expect(textOf(full)).toBe(NOTES.join('\n'))
  })

  it("with onStorageError: 'truncate', S3 and URL blocks stay while stored ones are marked dropped", async () => {
    const failing = { store: async () => Promise.reject(new Error('disk full')), retrieve: async () => Promise.reject(new Error('x')) }
    const d = new Driven(new ContextOffloader({ storage: failing, maxResultTokens: 100, previewTokens: 10, onStorageError: 'truncate' }))
    const original = result()
    const replaced = await d.offload(original)
    const blocks = replaced.content.map((b: any) => JSON.parse(JSON.stringify(b)))
    expect(blocks[0].text).toMatch(/^\[Truncated: 10 blocks/)
    expect(blocks.filter((b: any) => !('text' in b))).toHaveLength(4)
    expect(blocks.filter((b: any) => b.text?.endsWith('| dropped]'))).toHaveLength(5)
  })
})
