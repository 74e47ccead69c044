// S3Storage against a real S3-compatible server: a single-node Garage started on
// 127.0.0.1 for this suite (scripts/garage.mjs; `node scripts/garage.mjs ensure`
// installs it). Round trips, reference rules, multipart, the agent loop with a
// native search, and a server outage in the middle of an offload.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { Agent, tool } from '@strands-agents/sdk'
import { S3Client, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { z } from 'zod'
import { ContextOffloader, S3Storage } from '../index.js'
import { startGarage } from '../scripts/garage.mjs'
import { ScriptedModel, TextBlock, Driven, textTurn, toolCallTurn } from './helpers/harness.js'

let garage: Awaited<ReturnType<typeof startGarage>>
let client: S3Client

beforeAll(async () => {
  garage = await startGarage()
  client = new S3Client({
    endpoint: garage.endpoint,
    region: garage.region,
    forcePathStyle: true,
    credentials: { accessKeyId: garage.accessKeyId, secretAccessKey: garage.secretAccessKey },
  })
})

afterAll(async () => {
  client?.destroy()
  await garage?.stop()
})

function storage(options: Record<string, unknown> = {}) {
  return new S3Storage(garage.bucket, {
    endpoint: garage.endpoint,
    region: garage.region,
    forcePathStyle: true,
    credentials: { accessKeyId: garage.accessKeyId, secretAccessKey: garage.secretAccessKey },
    timeoutMs: 3_000,
    maxAttempts: 2,
    ...options,
  })
}

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

async function listKeys(prefix = '') {
  const out = await client.send(new ListObjectsV2Command({ Bucket: garage.bucket, Prefix: prefix }))
  return (out.Contents ?? []).map((o) => o.Key!)
}

describe('S3Storage round trips', () => {
  test('text, JSON and binary keep their bytes and content types', async () => {
    const s = storage({ prefix: 'rt' })
    const binary = new Uint8Array(70_000).map((_, i) => (i * 31) & 0xff)
    const cases: Array<[string, Uint8Array, string]> = [
      ['text_0', enc('hello\nworld ünïcödé 🎉'), 'text/plain'],
      ['json_1', enc(JSON.stringify({ a: [1, 2, 3] }, null, 2)), 'application/json'],
      ['bin_2', binary, 'image/png'],
    ]
    for (const [key, bytes, type] of cases) {
      const ref = await s.store(key, bytes, type)
      expect(ref).toMatch(new RegExp(`^s3://${garage.bucket}/rt/\\d+_\\d+_${key}$`))
      const got = await s.retrieve(ref)
      expect(got.contentType).toBe(type)
      expect(Buffer.from(got.content).equals(Buffer.from(bytes))).toBe(true)
      const head = await client.send(new ListObjectsV2Command({ Bucket: garage.bucket, Prefix: ref.slice(`s3://${garage.bucket}/`.length) }))
      expect(head.Contents?.[0]?.Size).toBe(bytes.length)
    }
    // default content type, sequence numbers, sanitised keys
    const ref = await s.store('../a b/c', enc('x'))
    expect(ref).toMatch(new RegExp(`^s3://${garage.bucket}/rt/\\d+_4___a_b_c$`))
    expect((await s.retrieve(ref)).contentType).toBe('text/plain')
  })

  test('prefixes are normalised like the SDK and raw keys are accepted', async () => {
    expect(storage({ prefix: 'a/b///' }).prefix).toBe('a/b/')
    expect(storage().prefix).toBe('')
    const s = storage({ prefix: 'a/b//' })
    const ref = await s.store('k', enc('prefixed'), 'text/plain')
    const key = ref.slice(`s3://${garage.bucket}/`.length)
    expect(key.startsWith('a/b/')).toBe(true)
    expect(await listKeys('a/b/')).toContain(key)
    expect(dec((await s.retrieve(key)).content)).toBe('prefixed')
    // no prefix: keys at the bucket root
    const root = storage()
    const rootRef = await root.store('rootkey', enc('root'), 'text/plain')
    expect(rootRef).toMatch(new RegExp(`^s3://${garage.bucket}/\\d+_1_rootkey$`))
    expect(dec((await root.retrieve(rootRef.split('/').pop()!)).content)).toBe('root')
  })

  test('bucket mismatch, keys outside the prefix and missing keys are "Reference not found"', async () => {
    const s = storage({ prefix: 'scoped' })
    await expect(s.retrieve('s3://other-bucket/scoped/1_1_x')).rejects.toThrow(
      'Reference not found: s3://other-bucket/scoped/1_1_x (bucket mismatch)',
    )
    const outside = await storage({ prefix: 'elsewhere' }).store('x', enc('x'), 'text/plain')
    await expect(s.retrieve(outside)).rejects.toThrow(new RegExp(`^Reference not found: ${outside}$`))
    await expect(s.retrieve(`s3://${garage.bucket}/scoped/missing`)).rejects.toThrow(
      new RegExp(`^Reference not found: s3://${garage.bucket}/scoped/missing$`),
    )
    await expect(s.retrieve('scoped/missing')).rejects.toThrow(/^Reference not found: scoped\/missing$/)
  })

  test('wrong credentials give a clear error naming the operation, bucket and key', async () => {
    const s = storage({ credentials: { accessKeyId: garage.accessKeyId, secretAccessKey: '0'.repeat(64) } })
    await expect(s.store('k', enc('x'), 'text/plain')).rejects.toThrow(
      new RegExp(`^S3 PutObject of s3://${garage.bucket}/\\d+_1_k failed: `),
    )
  })
})

describe('S3Storage multipart uploads', () => {
  test('a 50 MB object round-trips and no upload is left pending', { timeout: 180_000 }, async () => {
    const s = storage({ prefix: 'big', timeoutMs: 60_000 })
    const big = new Uint8Array(50 * 1024 * 1024)
    for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) & 0xff
    big[big.length - 1] = 7
    const ref = await s.store('huge', big, 'application/octet-stream')
    const got = await s.retrieve(ref)
    expect(got.content.length).toBe(big.length)
    expect(Buffer.from(got.content).equals(Buffer.from(big))).toBe(true)
    const pending = await client.send(new ListMultipartUploadsCommand({ Bucket: garage.bucket }))
    expect(pending.Uploads ?? []).toHaveLength(0)
    expect(await listKeys('big/')).toEqual([ref.slice(`s3://${garage.bucket}/`.length)])
  })
})

const NEEDLE = 'E4711'
const LOG = Array.from({ length: 3100 }, (_, i) =>
  i === 1733
    ? `2024-06-01T10:17:33Z ERROR code=${NEEDLE} disk full on /var/lib/data (write failed)`
    : `2024-06-01T10:00:00Z INFO  worker=${i % 8} handled request #${i} in ${(i * 13) % 97}ms`,
).join('\n')

describe('ContextOffloader with S3Storage', () => {
  test('agent loop: offload to S3, grep natively with the retrieval tool, answer', { timeout: 120_000 }, async () => {
    const observed: any = {}
    const lastTexts = (messages: any[]) =>
      messages
        .at(-1)
        .content.find((b: any) => b.type === 'toolResultBlock')
        .content.filter((c: any) => c.type === 'textBlock')
        .map((c: any) => c.text)
    const model = new ScriptedModel([
      () => toolCallTurn('fetch_logs', 'tu-1', {}),
      (messages) => {
        const preview = lastTexts(messages)[0]
        observed.ref = /\n {2}(\S.*?) \(text, [\d,]+ chars\)/.exec(preview)?.[1]
        observed.preview = preview
        return toolCallTurn('retrieve_offloaded_content', 'tu-2', {
          reference: observed.ref,
          pattern: `code=${NEEDLE}`,
          context_lines: 2,
        })
      },
      (messages) => {
        observed.grep = lastTexts(messages)[0]
        return textTurn('done')
      },
    ])
    const fetchLogs = tool({ name: 'fetch_logs', description: 'logs', inputSchema: z.object({}), callback: () => LOG })
    const plugin = new ContextOffloader({ storage: storage({ prefix: 'agent' }) })
    const agent = new Agent({ model, tools: [fetchLogs], plugins: [plugin], printer: false })
    const result = await agent.invoke('Why did it fail?')
    expect(result.stopReason).toBe('endTurn')
    expect(observed.preview.startsWith('[Offloaded: 1 blocks, ~')).toBe(true)
    expect(observed.preview).not.toContain(NEEDLE)
    expect(observed.ref).toMatch(new RegExp(`^s3://${garage.bucket}/agent/\\d+_1_tu-1_0$`))
    expect(observed.grep.startsWith(`[1 match for /code=${NEEDLE}/]`)).toBe(true)
    expect(observed.grep).toContain(`> 1734| 2024-06-01T10:17:33Z ERROR code=${NEEDLE} disk full`)
  })

  test('server down during an offload: result kept, one warning; after a restart the next offload works', { timeout: 120_000 }, async () => {
    const s = storage({ prefix: 'outage', timeoutMs: 2_000, maxAttempts: 2 })
    const driven = new Driven(new ContextOffloader({ storage: s, maxResultTokens: 100, previewTokens: 10 }))
    const before = await driven.offload([new TextBlock('before the outage\n'.repeat(200))])
    const beforeRef = /\n {2}(\S+) \(text/.exec(before.content[0].text)![1]

    const warnings: string[] = []
    const spy = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(' '))
    })
    try {
      await garage.halt()
      const text = 'during the outage\n'.repeat(200)
      const started = Date.now()
      const during = await driven.offload([new TextBlock(text)], { toolUseId: 'down-1' })
      expect(Date.now() - started).toBeLessThan(15_000)
      expect(during.content).toHaveLength(1)
      expect(during.content[0].text).toBe(text)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain('tool_use_id=<down-1> | failed to offload tool result, keeping original')
      expect(warnings[0]).toMatch(/S3 PutObject of s3:\/\/test-bucket\/outage\/\d+_\d+_down-1_0 failed: .*(connect|Connection refused)/i)
    } finally {
      spy.mockRestore()
      await garage.restart()
    }

    const after = await driven.offload([new TextBlock('after the outage\n'.repeat(200))], { toolUseId: 'up-1' })
    const afterRef = /\n {2}(\S+) \(text/.exec(after.content[0].text)![1]
    expect(dec((await s.retrieve(afterRef)).content)).toBe('after the outage\n'.repeat(200))
    expect(dec((await s.retrieve(beforeRef)).content)).toBe('before the outage\n'.repeat(200))
    // nothing from the failed offload was written
    const keys = await listKeys('outage/')
    expect(keys.some((k) => k.includes('down-1'))).toBe(false)
    expect(keys).toHaveLength(2)
  })
})
