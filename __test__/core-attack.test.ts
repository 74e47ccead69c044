// The core's promises under attack: `reuse` answers only the very content, options and
// session it stored (framing, media types, file names, aliasing, concurrent re-sends, a
// restart with other options), what it keeps for reuse goes when the content goes, the
// retrieval tool never throws, and content parts' base64 is base64.
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import * as core from '../core.js'
import { tempDirs } from './helpers/harness.js'

const { Offloader, InMemoryStorage, FileStorage } = core as any
const dir = tempDirs('co-core-attack-')
const lines = (tag: string, n = 3000) => Array.from({ length: n }, (_, i) => `${tag} line ${i}`).join('\n')

/** Every file under `root`, recursively. */
function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

describe('reuse answers only the content it stored', () => {
  test('texts that differ only in where a NUL-framed block boundary falls are different content', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const x = 'x'.repeat(600)
    const first = [{ type: 'text', text: `${x}\u0000textBlock\u0000y` }, { type: 'text', text: 'z' }]
    const second = [{ type: 'text', text: x }, { type: 'text', text: 'y\u0000textBlock\u0000z' }]
    const a = await o.offloadResult({ toolName: 't', toolCallId: 'c', content: first, reuse: true })
    const b = await o.offloadResult({ toolName: 't', toolCallId: 'c', content: second, reuse: true })
    expect(b.references[0].reference).not.toBe(a.references[0].reference)
    expect(o.stats().offloads).toBe(2)
  })

  test('a lone surrogate and U+FFFD are different text', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const a = await o.offloadResult({ toolName: 't', toolCallId: 'c', content: `\ud800${'q'.repeat(600)}`, reuse: true })
    const b = await o.offloadResult({ toolName: 't', toolCallId: 'c', content: `\ufffd${'q'.repeat(600)}`, reuse: true })
    expect(b.text).not.toBe(a.text)
  })

  test('the same bytes as another media type or file name are different content', async () => {
    const o = new Offloader({ shouldOffload: () => true })
    const bytes = new Uint8Array(4000).fill(7)
    const png = await o.offloadResult({ toolName: 't', toolCallId: 'i', content: [{ type: 'image', data: bytes, mediaType: 'image/png' }], reuse: true })
    const jpeg = await o.offloadResult({ toolName: 't', toolCallId: 'i', content: [{ type: 'image', data: bytes, mediaType: 'image/jpeg' }], reuse: true })
    expect(png.references[0].contentType).toBe('image/png')
    expect(jpeg.references[0].contentType).toBe('image/jpeg')
    const a = await o.offloadResult({ toolName: 't', toolCallId: 'f', content: [{ type: 'file', data: bytes, mediaType: 'application/pdf', filename: 'a.pdf' }], reuse: true })
    const b = await o.offloadResult({ toolName: 't', toolCallId: 'f', content: [{ type: 'file', data: bytes, mediaType: 'application/pdf', filename: 'b.pdf' }], reuse: true })
    expect(a.parts[1].text).toContain('a.pdf')
    expect(b.parts[1].text).toContain('b.pdf')
  })

  test('what a caller does to a result it got does not change what a re-send answers', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const call = { toolName: 't', toolCallId: 'c', content: lines('a'), reuse: true }
    const a = await o.offloadResult(call)
    const text = a.text
    a.text = 'changed by the caller'
    a.parts.push({ type: 'text', text: 'added by the caller' })
    a.references[0].description = 'changed'
    const again = await o.offloadResult(call)
    expect(again.text).toBe(text)
    expect(again.parts).toEqual([{ type: 'text', text }])
    expect(again.references[0].description).not.toBe('changed')
    again.text = 'changed again'
    expect((await o.offloadResult(call)).text).toBe(text)
    expect(o.stats().offloads).toBe(1)
  })

  test('re-sends of one call made at the same time store it once', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const call = { toolName: 't', toolCallId: 'c', content: lines('a'), reuse: true, sessionId: 'thread-1' }
    const results = await Promise.all([o.offloadResult(call), o.offloadResult({ ...call }), o.offloadResult({ ...call })])
    expect(o.stats().offloads).toBe(1)
    expect(new Set(results.map((r: any) => r.references[0].reference)).size).toBe(1)
    // Another call at the same time is not held up, and a failed offload frees the key.
    const failing = new Offloader({ storage: { store: async () => { throw new Error('down') }, retrieve: async () => { throw new Error('down') } } })
    expect(await Promise.all([failing.offloadResult(call), failing.offloadResult(call)])).toEqual([null, null])
  })

  test('a result made with other options (a restart with references switched) is not answered', async () => {
    const d = dir()
    const call = { toolName: 't', toolCallId: 'c', content: lines('a'), reuse: true, sessionId: 'thread-1' }
    await new Offloader({ storage: new FileStorage(d), references: 'opaque' }).offloadResult(call)
    const paths = new Offloader({ storage: new FileStorage(d), references: 'paths' })
    const b = await paths.offloadResult(call)
    expect(b.references[0].reference.startsWith(d)).toBe(true)
    expect(await paths.retrievalTool.execute({ reference: b.references[0].reference, line_range: { start: 1, end: 1 } }, { sessionId: 'thread-1' })).toContain('a line 0')
    const shorter = await new Offloader({ storage: new FileStorage(d), references: 'paths', previewTokens: 10 }).offloadResult(call)
    expect(shorter.text.length).toBeLessThan(b.text.length)
  })
})

describe('what reuse keeps goes with the content', () => {
  test.each(['paths', 'opaque'])('no file holds the content after its TTL ran out and the store was swept, references: %s', async (references) => {
    const d = dir()
    let now = Date.now()
    const storage = new FileStorage({ artifactDir: d, ttlSeconds: 60, clock: () => now })
    const o = new Offloader({ storage, references, previewTokens: 100 })
    await o.offloadResult({ toolName: 't', toolCallId: 'c', content: lines('confidential'), reuse: true, sessionId: 'thread-1' })
    now += 61_000
    expect(await storage.cleanupExpired()).toBe(1)
    const holding = filesUnder(d).filter((f) => readFileSync(f, 'utf8').includes('confidential line'))
    expect(holding).toEqual([])
  })
})

describe('the retrieval tool never throws', () => {
  test('inputs and contexts whose properties throw are answered with an error text', async () => {
    const o = new Offloader({ retrieval: 'extended' })
    const r = await o.offloadResult({ toolName: 't', toolCallId: 'c', content: lines('a') })
    const ref = r.references[0].reference
    const t = o.retrievalTool
    const boom = () => {
      throw new Error('boom')
    }
    const hostile: Array<[unknown, unknown]> = [
      [{ get reference() { return boom() } }, undefined],
      [new Proxy({}, { get: boom }), undefined],
      [{ reference: ref, line_range: { get start() { return boom() }, end: 2 } }, undefined],
      [{ reference: ref }, { get sessionId() { return boom() } }],
      [{ reference: ref }, new Proxy({}, { get: boom })],
    ]
    for (const [input, context] of hostile) {
      const answer = await t.execute(input, context)
      expect(answer).toMatch(/^Error: invalid input/)
    }
  })
})

describe('content parts', () => {
  test('data that is not base64 is refused, not stored as other bytes', async () => {
    const o = new Offloader({ shouldOffload: () => true })
    const png = Buffer.from(new Uint8Array(600).map((_, i) => i % 251))
    for (const data of [`data:image/png;base64,${png.toString('base64')}`, '@@@not base64@@@', 'AAAAA']) {
      await expect(o.offloadResult({ toolName: 't', toolCallId: 'b', content: [{ type: 'image', data, mediaType: 'image/png' }] })).rejects.toThrow(
        /content\[0\]\.data must be bytes \(a Uint8Array\) or a base64 string/,
      )
    }
    // base64 with padding, with line breaks, and base64url are read.
    for (const data of [png.toString('base64'), png.toString('base64').replace(/.{76}/g, '$&\r\n'), png.toString('base64url')]) {
      const r = await o.offloadResult({ toolName: 't', toolCallId: 'b', content: [{ type: 'image', data, mediaType: 'image/png' }] })
      expect(Buffer.from((await o.storage.retrieve(r.references[0].reference)).content).equals(png)).toBe(true)
    }
  })
})

describe('reuse on storages that are not the package’s own', () => {
  test('a result whose blocks a custom storage no longer holds is stored again', async () => {
    const held = new Map<string, any>()
    let n = 0
    const offloaderStyle = {
      async store(key: string, content: Uint8Array, contentType: string) {
        const ref = `c_${++n}_${key}`
        held.set(ref, { content, contentType })
        return ref
      },
      async retrieve(ref: string) {
        if (!held.has(ref)) throw new Error(`Reference not found: ${ref}`)
        return held.get(ref)
      },
    }
    const values = new Map<string, Uint8Array>()
    const unified = {
      async write(key: string, data: Uint8Array) { values.set(key, data) },
      async read(key: string) { return values.get(key) ?? null },
      async delete(key: string) { values.delete(key) },
      async list(prefix: string) { return [...values.keys()].filter((k) => k.startsWith(prefix)) },
    }
    for (const [storage, drop] of [
      [offloaderStyle, () => held.clear()],
      [unified, () => [...values.keys()].filter((k) => !k.includes('offload-manifest')).forEach((k) => values.delete(k))],
    ] as const) {
      for (const references of ['paths', 'opaque']) {
        const o = new Offloader({ storage, references })
        const call = { toolName: 't', toolCallId: 'c', content: lines('a'), reuse: true, sessionId: 'thread-1' }
        const a = await o.offloadResult(call)
        expect(await o.offloadResult(call)).toEqual(a)
        drop()
        const b = await o.offloadResult(call)
        expect(o.stats().offloads).toBe(2)
        const answer = await o.retrievalTool.execute({ reference: b.references[0].reference, line_range: { start: 1, end: 1 } }, { sessionId: 'thread-1' })
        expect(answer).toContain('a line 0')
      }
    }
  })
})

describe('data that only looks like parts is data', () => {
  test('rich text, image blocks by URL field and file listings are stored as JSON, not refused', async () => {
    const o = new Offloader({ maxResultTokens: 100, previewTokens: 10 })
    const richText = Array.from({ length: 50 }, (_, i) => ({ type: 'text', text: { content: `paragraph ${i} `.repeat(5), link: null }, plain_text: `paragraph ${i}` }))
    const imageBlocks = [{ type: 'image', image_url: 'https://example.com/x.png', alt_text: 'x'.repeat(800) }]
    const files = [{ type: 'file', name: 'a.txt', size: 10, path: '/x'.repeat(300) }]
    const numbered = [{ type: 'text', text: 5, note: 'y'.repeat(800) }]
    for (const [i, content] of [richText, imageBlocks, files, numbered].entries()) {
      const r = await o.offloadResult({ toolName: 't', toolCallId: `d${i}`, content })
      expect(r.references.map((x: any) => x.contentType)).toEqual(['application/json'])
      expect(await o.retrievalTool.execute({ reference: r.references[0].reference })).toBe(JSON.stringify(content, null, 2))
    }
    // Parts that are parts but malformed are still refused by name.
    await expect(o.offloadResult({ toolName: 't', toolCallId: 'p', content: [{ type: 'image', data: 'AAAA', mediaType: 'png' }] })).rejects.toThrow(/content\[0\]\.mediaType/)
  })
})
