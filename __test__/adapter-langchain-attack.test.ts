// context-offloader/langchain in LangChain's real `createAgent` loop (its fake chat
// model and a checkpointer): inline media spelled in the forms LangChain itself reads as
// base64 data (a `data:` URL as a standard block's `url`, Anthropic's base64 `source`)
// are stored like any inline block, and never kept in the prompt or the checkpoint.
import { describe, expect, test } from 'vitest'
import { AIMessage, createAgent, fakeModel, HumanMessage, tool } from 'langchain'
import { MemorySaver } from '@langchain/langgraph'
import { contextOffloaderMiddleware, METADATA_KEY } from '../langchain.js'

const NO_ARGS = { type: 'object', properties: {} } as const
const LOG = Array.from({ length: 20_000 }, (_, i) => `${i} INFO request done`).join('\n')
/** About 300 KB of base64 (a PNG's worth of bytes). */
const BASE64 = Buffer.alloc(225_000, 9).toString('base64')

describe('inline media in every spelling LangChain reads as base64 data', () => {
  test.each([
    ['a standard image block whose url is a data: URL', { type: 'image', url: `data:image/png;base64,${BASE64}` }, 'image/png'],
    ['a standard file block whose url is a data: URL', { type: 'file', url: `data:application/pdf;base64,${BASE64}`, metadata: { filename: 'report.pdf' } }, 'application/pdf'],
    ["Anthropic's base64 source block", { type: 'image', source: { type: 'base64', media_type: 'image/png', data: BASE64 } }, 'image/png'],
  ])('%s is stored, and neither the next prompt nor the checkpoint holds its data', async (_name, media, mediaType) => {
    const offloading = contextOffloaderMiddleware()
    const checkpointer = new MemorySaver()
    const model = fakeModel()
      .respondWithTools([{ name: 'snapshot', args: {}, id: 'c1' }])
      .respond(new AIMessage('done'))
    const snapshot = tool(async () => [{ type: 'text', text: LOG }, media], { name: 'snapshot', description: 'A log and a picture.', schema: NO_ARGS })
    const agent = createAgent({ model, tools: [snapshot], middleware: [offloading], checkpointer })
    await agent.invoke({ messages: [new HumanMessage('go')] }, { configurable: { thread_id: 't-1' } })

    const seen = model.calls[1].messages.find((m: any) => m.type === 'tool') as any
    expect(JSON.stringify(seen.content)).not.toContain(BASE64.slice(0, 64))
    expect(JSON.stringify(seen.content).length).toBeLessThan(20_000)
    const meta = seen.metadata[METADATA_KEY]
    expect(meta.references.map((r: any) => r.contentType)).toEqual(['text/plain', mediaType])
    const stored = await offloading.offloader.storage.retrieve(meta.references[1].storageReference ?? meta.references[1].reference)
    expect(Buffer.from(stored.content).toString('base64')).toBe(BASE64)

    let saved = 0
    for await (const c of checkpointer.list({ configurable: { thread_id: 't-1' } })) saved += JSON.stringify(c).length
    expect(saved).toBeLessThan(200_000)
  })

  test('a remote URL and a file id stay in the message as they are', async () => {
    const kept = [
      { type: 'image', url: 'https://example.com/a.png' },
      { type: 'file', fileId: 'file-123', mimeType: 'application/pdf' },
    ]
    const model = fakeModel()
      .respondWithTools([{ name: 'snapshot', args: {}, id: 'c1' }])
      .respond(new AIMessage('done'))
    const snapshot = tool(async () => [{ type: 'text', text: LOG }, ...kept], { name: 'snapshot', description: 'A log and links.', schema: NO_ARGS })
    const agent = createAgent({ model, tools: [snapshot], middleware: [contextOffloaderMiddleware()] })
    await agent.invoke({ messages: [new HumanMessage('go')] })
    const seen = model.calls[1].messages.find((m: any) => m.type === 'tool') as any
    expect(seen.content[0].text).toMatch(/^\[Offloaded: /)
    expect(seen.content.slice(1)).toEqual(kept)
  })
})
