// S3Storage against a real S3-compatible server: a single-node Garage started on
// 127.0.0.1 for this suite (scripts/garage.mjs; `node scripts/garage.mjs ensure`
// installs it). Round trips, reference rules, multipart, the agent loop with a
// native search, and a server outage in the middle of an offload.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { Agent, SessionManager, tool } from '@strands-agents/sdk'
import { S3Storage as SdkS3Storage } from '@strands-agents/sdk/storage'
import { S3Storage as SdkS3SnapshotStorage } from '@strands-agents/sdk/session/s3-storage'
import { S3Client, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { v7 as uuidV7 } from 'uuid'
import { z } from 'zod'
import { ContextOffloader, FileSnapshotStorage, S3SnapshotStorage, S3Storage } from '../index.js'
import { startGarage } from '../scripts/garage.mjs'
import { ScriptedModel, TextBlock, Driven, sessionManagerFor, tempDir, textTurn, toolCallTurn, toolAnswer } from './helpers/harness.js'

let garage: Awaited<ReturnType<typeof startGarage>>
let client: S3Client

beforeAll(async () => {
  garage = await startGarage()
  client = new S3Client({
    ...garage.connection,
  })
})

afterAll(async () => {
  client?.destroy()
  await garage?.stop()
})

function storage(options: Record<string, unknown> = {}) {
  return new S3Storage(garage.bucket, {
    ...garage.connection,
    timeoutMs: 3_000,
    maxAttempts: 2,
    ...options,
  })
}

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

async function listKeys(prefix = '') {
  const keys: string[] = []
  let token: string | undefined
  do {
    const out = await client.send(new ListObjectsV2Command({ Bucket: garage.bucket, Prefix: prefix, ContinuationToken: token }))
    keys.push(...(out.Contents ?? []).map((o) => o.Key!))
    token = out.IsTruncated ? out.NextContinuationToken : undefined
  } while (token)
  return keys
}

/** The SDK's unified S3Storage on the Garage server. */
function sdkStorage(prefix?: string) {
  return new SdkS3Storage(garage.bucket, { prefix, s3Client: client })
}

/** The outcome of a call: its value (bytes decoded), or the error's class name and message. */
async function outcome(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await fn()
    return { value: value instanceof Uint8Array ? { bytes: dec(value) } : value }
  } catch (e: any) {
    return { error: e?.name, message: e?.message }
  }
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

  test('only artifact objects are read: unified values, snapshots, manifests and Windows-shaped names are "Reference not found"', { timeout: 60_000 }, async () => {
    const prefix = `shaped-${uuidV7()}`
    const s = storage({ prefix })
    const artifact = await s.store('k', enc('the artifact'), 'text/plain')
    const planted = [
      `${prefix}/value.json`,
      `${prefix}/notes/secret.txt`,
      `${prefix}/offload-manifest/s1/ref_1.json`,
      `${prefix}/session/sess-1/scopes/agent/a/snapshots/snapshot_latest.json`,
      `${prefix}/1_1_k/nested`,
      `${prefix}/1_1_C:evil`,
      `${prefix}/1_1_a\\b`,
      `${prefix}/1_1_a\u0085b`,
      `${prefix}/x_1_k`,
    ]
    for (const key of planted) {
      await client.send(new PutObjectCommand({ Bucket: garage.bucket, Key: key, Body: 'planted secret', ContentType: 'text/plain' }))
    }
    const plugin = new ContextOffloader({ storage: s })
    const driven = new Driven(plugin)
    expect(await toolAnswer(driven.tool, { reference: artifact }, driven.agent)).toBe('the artifact')
    for (const key of planted) {
      for (const reference of [key, `s3://${garage.bucket}/${key}`]) {
        await expect(s.retrieve(reference), reference).rejects.toThrow(/^Reference not found/)
        for (const input of [{ reference }, { reference, pattern: 'secret' }, { reference, line_range: { start: 1, end: 1 } }]) {
          const answer = await toolAnswer(driven.tool, input, driven.agent)
          expect(answer, JSON.stringify(input)).toBe(`Error: reference not found: ${reference}`)
        }
      }
    }
    const extended = new Driven(new ContextOffloader({ storage: s, retrieval: 'extended' }))
    for (const key of planted) {
      for (const input of [{ reference: key }, { reference: key, query: '.' }, { reference: key, pattern: 'secret' }]) {
        const answer = await toolAnswer(extended.tool, input, extended.agent)
        expect(answer, JSON.stringify(input)).toBe(`Error: reference not found: ${key}`)
      }
    }
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

  test("references: 'opaque': no bucket or prefix reaches the model; ids resolve per session, also from a fresh plugin", { timeout: 120_000 }, async () => {
    const received: string[] = []
    let id = ''
    const lastText = (messages: any[]) => {
      const text = messages.at(-1).content.find((b: any) => b.type === 'toolResultBlock').content[0].text as string
      received.push(text)
      return text
    }
    const rawReference = `s3://${garage.bucket}/opaque/1_1_tu-1_0`
    const model = new ScriptedModel([
      () => toolCallTurn('fetch_logs', 'tu-1', {}),
      (messages) => {
        id = /ref_[A-Za-z0-9_-]{16}/.exec(lastText(messages))![0]
        return toolCallTurn('retrieve_offloaded_content', 'tu-2', { reference: id, pattern: `code=${NEEDLE}`, context_lines: 0 })
      },
      (messages) => {
        lastText(messages)
        return toolCallTurn('retrieve_offloaded_content', 'tu-3', { list: true })
      },
      (messages) => {
        lastText(messages)
        return toolCallTurn('retrieve_offloaded_content', 'tu-4', { reference: rawReference })
      },
      (messages) => {
        lastText(messages)
        return textTurn('done')
      },
    ])
    const fetchLogs = tool({ name: 'fetch_logs', description: 'logs', inputSchema: z.object({}), callback: () => LOG })
    const make = () => new ContextOffloader({ storage: storage({ prefix: 'opaque' }), references: 'opaque', retrieval: 'extended' })
    const sessions = tempDir('co-s3-opaque-sessions-')
    const agent = new Agent({
      model,
      tools: [fetchLogs],
      plugins: [make()],
      printer: false,
      sessionManager: sessionManagerFor('s3-opaque', new FileSnapshotStorage(sessions.path)),
    } as any)
    await agent.invoke('Why did it fail?')
    sessions.cleanup()
    expect(received[1]).toContain(`ERROR code=${NEEDLE} disk full`)
    expect(received[2]).toContain(`${id} | tool: fetch_logs | text/plain`)
    expect(received[3]).toBe(`Error: reference not found: ${rawReference}`)
    for (const text of received.slice(0, 3)) {
      expect(text.includes(garage.bucket)).toBe(false)
      expect(text.includes('s3://')).toBe(false)
      expect(/opaque\/\d+_/.test(text)).toBe(false)
    }
    // A fresh plugin (another process would do the same) in the same session reads the id;
    // another session does not.
    const ask = async (sessionId: string) => {
      const plugin = make()
      const tool = plugin.getTools()[0] as any
      const fake = { sessionId, sessionManager: { sessionId } }
      return toolAnswer(tool, { reference: id, line_range: { start: 1, end: 1 } }, fake)
    }
    expect(await ask(agent.sessionId)).toMatch(/^\[Lines 1-1 of 3100\]/)
    expect(await ask('someone-else')).toBe(`Error: reference not found: ${id}`)
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

describe('S3Storage as the unified Storage', () => {
  const KEYS = ['a', '/a//b/', 'a/b/c', 'a/..b', 'ключ/😀', 'x y+z=&#', 'ab', 'a/', '\uFF61', '😀']
  const BAD = ['', '///', 'a/../b', '..', 'a\\b', '\\']
  /** Keys the SDK takes and ours refuses on purpose (names some platform reads differently). */
  const REFUSED = ['...', 'x?y', 'C:.env', 'nul', 'tab\tkey', '1700000000000_1_artifact.txt']

  async function exercise(s: any) {
    const out: unknown[] = []
    for (const [i, key] of KEYS.entries()) out.push(await outcome(() => s.write(key, enc(`v${i} ${key}`))))
    for (const key of BAD) out.push(await outcome(() => s.write(key, enc('x'))))
    for (const key of [...KEYS, 'missing', 'a/b/missing', ...BAD]) out.push(await outcome(() => s.read(key)))
    out.push(await outcome(() => s.write('empty', new Uint8Array(0))))
    out.push(await outcome(() => s.read('empty')))
    for (const prefix of ['', 'a', 'a/', '/a//', 'a/b', 'x', 'missing/', '../x', 'a\\', 'ключ/']) {
      out.push(await outcome(() => s.list(prefix)))
    }
    out.push(await outcome(() => s.delete('a/b/c')))
    out.push(await outcome(() => s.delete('never-written')))
    out.push(await outcome(() => s.delete('a/../b')))
    out.push(await outcome(() => s.read('a/b/c')))
    const ns = s.namespace('ns//one/')
    out.push(await outcome(() => ns.write('k/1', enc('n1'))))
    out.push(await outcome(() => ns.namespace('k').write('2', enc('n2'))))
    out.push(await outcome(() => ns.list('')))
    out.push(await outcome(() => ns.namespace('k').list('')))
    out.push(await outcome(() => ns.read('k/2')))
    out.push(await outcome(() => ns.write('../x', enc('x'))))
    out.push(await outcome(() => ns.delete('k/1')))
    out.push(await outcome(() => s.list('ns')))
    return out
  }

  test('same results, errors and object keys as the SDK unified S3Storage', { timeout: 60_000 }, async () => {
    const sdkResults = await exercise(sdkStorage('u-sdk//p/'))
    const ourResults = await exercise(storage({ prefix: 'u-ours//p/' }))
    for (const [i, expected] of sdkResults.entries()) expect(ourResults[i], `operation ${i}`).toEqual(expected)
    const strip = (keys: string[], p: string) => keys.map((k) => k.slice(p.length))
    expect(strip(await listKeys('u-ours/'), 'u-ours/')).toEqual(strip(await listKeys('u-sdk/'), 'u-sdk/'))
    expect(await listKeys('u-ours/p/ns/one/')).toEqual(['u-ours/p/ns/one/k/2'])
  })

  test('keys some platform reads differently, and artifact names, are refused with nothing written', async () => {
    const s = storage({ prefix: 'u-refused/' })
    for (const key of REFUSED) {
      const result = await outcome(() => s.write(key, enc('x')))
      expect(result, key).toMatchObject({ error: 'StorageError' })
      expect((result as { message: string }).message, key).toMatch(/^Invalid storage key '/)
      expect(await outcome(() => s.delete(key)), key).toMatchObject({ error: 'StorageError' })
    }
    await s.write('a/./b', enc('dot'))
    expect(await s.list('')).toEqual(['a/b'])
    expect(await listKeys('u-refused/')).toEqual(['u-refused/a/b'])
  })

  test('data written by one reads in the other, without and with a prefix', async () => {
    for (const prefix of [undefined, 'shared/x']) {
      const sdk = sdkStorage(prefix)
      const ours = storage(prefix === undefined ? {} : { prefix })
      await sdk.write('cross/from-sdk', enc('sdk bytes'))
      await ours.write('/cross//from-ours', enc('our bytes'))
      expect(dec((await ours.read('cross/from-sdk'))!)).toBe('sdk bytes')
      expect(dec((await sdk.read('cross/from-ours'))!)).toBe('our bytes')
      expect(await ours.list('cross/')).toEqual(await sdk.list('cross/'))
      await ours.delete('cross/from-sdk')
      expect(await sdk.read('cross/from-sdk')).toBeNull()
    }
  })

  test('listing follows continuation tokens past 1,000 keys', { timeout: 120_000 }, async () => {
    const s = storage({ prefix: 'many' })
    const keys = Array.from({ length: 1105 }, (_, i) => `k/${String(i).padStart(5, '0')}`)
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => s.write(k, enc(k))))
    const listed = await s.list('k/')
    expect(listed).toEqual(keys)
    expect(listed).toEqual(await sdkStorage('many').list('k/'))
  })

  test('request failures are StorageErrors with the SDK messages', async () => {
    const bad = { accessKeyId: garage.accessKeyId, secretAccessKey: '0'.repeat(64) }
    const ours = storage({ credentials: bad, maxAttempts: 1 })
    const badClient = new S3Client({ endpoint: garage.endpoint, region: garage.region, forcePathStyle: true, credentials: bad })
    const sdk = new SdkS3Storage(garage.bucket, { s3Client: badClient })
    try {
      for (const op of [
        (s: any) => s.write('/k//x', enc('x')),
        (s: any) => s.read('k'),
        (s: any) => s.delete('k'),
        (s: any) => s.list('/p//'),
      ]) {
        const [a, b] = [await outcome(() => op(sdk)), await outcome(() => op(ours))]
        expect(b).toEqual(a)
      }
      const err: any = await ours.read('k').catch((e) => e)
      expect(err.cause).toBeInstanceOf(Error)
    } finally {
      badClient.destroy()
    }
  })

  test("an Agent with contextManager 'auto' stashes into S3Storage as into the SDK's", { timeout: 120_000 }, async () => {
    async function run(store: any) {
      const observed: any = {}
      const model = new ScriptedModel([
        () => toolCallTurn('fetch_logs', 'tu-1', {}),
        (messages) => {
          const text = JSON.stringify(messages[messages.length - 1])
          observed.ref = /\[ref: ([^\]\s]+)\]/.exec(text)?.[1]
          return toolCallTurn('retrieve_context', 'tu-2', { reference: observed.ref, pattern: NEEDLE })
        },
        (messages) => {
          observed.retrieved = JSON.stringify(messages[messages.length - 1])
          return textTurn('done')
        },
      ])
      const fetchLogs = tool({ name: 'fetch_logs', description: 'logs', inputSchema: z.object({}), callback: () => LOG })
      const agent = new Agent({ model, tools: [fetchLogs], storage: store, contextManager: 'auto', printer: false })
      await agent.invoke('What failed?')
      const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
      const keys = (await store.list('')).map((k: string) => k.split(agent.sessionId).join('<session>').replace(uuid, '<uuid>'))
      return { observed, keys }
    }
    const o = await run(storage({ prefix: 'cm-ours' }))
    const s = await run(sdkStorage('cm-sdk'))
    expect(o.observed.ref).toBe('tu-1_0')
    expect(o.observed.retrieved).toContain(NEEDLE)
    expect(o.keys).toContain('context/<session>/scopes/agent/agent/tu-1_0')
    expect(o.keys).toEqual(s.keys)
  })
})

const loc = (sessionId: string, scopeId = 'default', scope = 'agent') => ({ sessionId, scope, scopeId }) as any

function snapshotOf(i: number) {
  return {
    scope: 'agent',
    schemaVersion: '1.0',
    createdAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
    data: { messages: [{ role: 'user', content: [{ text: `m${i} ✓ \u{1F600}` }] }], state: { n: i } },
    appData: {},
  }
}

describe('S3SnapshotStorage against the SDK session S3Storage', () => {
  const ourSnapshots = (prefix?: string) =>
    new S3SnapshotStorage({
      bucket: garage.bucket,
      prefix,
      ...garage.connection,
      timeoutMs: 3_000,
      maxAttempts: 2,
    })
  const sdkSnapshots = (prefix?: string) => new SdkS3SnapshotStorage({ bucket: garage.bucket, prefix, s3Client: client })

  async function objects(prefix: string) {
    const out: Record<string, { body: string; type?: string }> = {}
    for (const key of await listKeys(prefix)) {
      const got = await client.send(new GetObjectCommand({ Bucket: garage.bucket, Key: key }))
      out[key.slice(prefix.length)] = { body: await got.Body!.transformToString(), type: got.ContentType }
    }
    return out
  }

  test('same objects and same results for saves, loads, paging, errors and deletes', { timeout: 120_000 }, async () => {
    const sdk = sdkSnapshots('snap-sdk')
    const ours = ourSnapshots('snap-ours')
    const ids = Array.from({ length: 25 }, () => uuidV7())
    // foreign objects under the history prefix, and an empty and a broken object
    for (const p of ['snap-sdk', 'snap-ours']) {
      const dir = `${p}/s1/scopes/agent/default/snapshots/immutable_history/`
      await client.send(new PutObjectCommand({ Bucket: garage.bucket, Key: `${dir}notes.txt`, Body: '{}' }))
      await client.send(new PutObjectCommand({ Bucket: garage.bucket, Key: `${dir}snapshot_a.b.json`, Body: '{}' }))
      await client.send(new PutObjectCommand({ Bucket: garage.bucket, Key: `${p}/s3/scopes/agent/default/snapshots/snapshot_latest.json`, Body: '' }))
      await client.send(new PutObjectCommand({ Bucket: garage.bucket, Key: `${p}/s3/scopes/agent/default/snapshots/manifest.json`, Body: '{nope' }))
    }
    const ops: Array<(s: any) => Promise<unknown>> = [
      (s) => s.saveSnapshot({ location: loc('s1'), snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(0) }),
      ...ids.map((id, i) => (s: any) =>
        s.saveSnapshot({ location: loc('s1'), snapshotId: id, isLatest: false, snapshot: snapshotOf(i + 1) }),
      ),
      (s) => s.saveSnapshot({ location: loc('s1', 'orch', 'multiAgent'), snapshotId: 'x', isLatest: true, snapshot: { a: 1 } }),
      (s) => s.saveSnapshot({ location: loc('s2'), snapshotId: 'named_snapshot', isLatest: false, snapshot: [1, 'two'] }),
      (s) => s.saveManifest({ location: loc('s1'), manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } }),
      (s) => s.saveSnapshot({ location: loc('BAD'), snapshotId: 'x', isLatest: true, snapshot: {} }),
      (s) => s.saveSnapshot({ location: loc('s1', 'default', 'nope'), snapshotId: 'x', isLatest: true, snapshot: {} }),
      (s) => s.saveSnapshot({ location: loc('BAD'), snapshotId: '../x', isLatest: false, snapshot: {} }),
      (s) => s.loadSnapshot({ location: loc('s1') }),
      (s) => s.loadSnapshot({ location: loc('s1'), snapshotId: ids[3] }),
      (s) => s.loadSnapshot({ location: loc('s1'), snapshotId: uuidV7() }),
      (s) => s.loadSnapshot({ location: loc('nobody') }),
      (s) => s.loadSnapshot({ location: loc('s2'), snapshotId: 'named_snapshot' }),
      (s) => s.loadSnapshot({ location: loc('s3') }),
      (s) => s.loadSnapshot({ location: loc('s1'), snapshotId: 'A' }),
      (s) => s.loadManifest({ location: loc('s1') }),
      (s) => s.loadManifest({ location: loc('s3') }),
      (s) => s.listSnapshotIds({ location: loc('s1') }),
      (s) => s.listSnapshotIds({ location: loc('s2') }),
      (s) => s.listSnapshotIds({ location: loc('nobody') }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 0 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: -3 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 3 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: Infinity }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 1e12 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: ids[10] }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: ids[10]!.toUpperCase(), limit: 3 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: ids[24] }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: '' }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: 'not-a-uuid' }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 0, startAfter: 'not-a-uuid' }),
      (s) => s.listSnapshotIds({ location: loc('X') }),
      (s) => s.deleteSession({ sessionId: 'nobody' }),
      (s) => s.deleteSession({ sessionId: 'Bad/..' }),
    ]
    const strip = (v: any) => JSON.parse(JSON.stringify(v).replaceAll('snap-sdk', 'P').replaceAll('snap-ours', 'P'))
    for (const [i, op] of ops.entries()) {
      const [a, b] = [await outcome(() => op(sdk)), await outcome(() => op(ours))]
      const fresh = (v: any) => (v?.value?.updatedAt && v.value.schemaVersion ? { ...v, value: { ...v.value, updatedAt: '<now>' } } : v)
      expect(strip(fresh(b)), `operation ${i}`).toEqual(strip(fresh(a)))
    }
    expect(await objects('snap-ours/')).toEqual(await objects('snap-sdk/'))

    // Paging with startAfter walks every id exactly once, in UUID v7 order.
    for (const s of [sdk, ours] as any[]) {
      const seen: string[] = []
      let page: string[] = await s.listSnapshotIds({ location: loc('s1'), limit: 4 })
      while (page.length > 0) {
        seen.push(...page)
        page = await s.listSnapshotIds({ location: loc('s1'), limit: 4, startAfter: page.at(-1) })
      }
      expect(seen).toEqual([...ids].sort())
    }

    // Objects written by one are read by the other (same prefix).
    expect(await sdkSnapshots('snap-ours').loadSnapshot({ location: loc('s1'), snapshotId: ids[7] })).toEqual(snapshotOf(8))
    expect(await ourSnapshots('snap-sdk').loadSnapshot({ location: loc('s1'), snapshotId: ids[7] })).toEqual(snapshotOf(8))
    expect(await ourSnapshots('snap-sdk').listSnapshotIds({ location: loc('s1') })).toEqual([...ids].sort())

    for (const s of [sdk, ours] as any[]) await s.deleteSession({ sessionId: 's1' })
    expect(await objects('snap-ours/')).toEqual(await objects('snap-sdk/'))
    expect(Object.keys(await objects('snap-ours/')).some((k) => k.startsWith('s1/'))).toBe(false)
  })

  test('no prefix, listing past 1,000 snapshots and deleting a session of more than 1,000 objects', { timeout: 180_000 }, async () => {
    const ours = ourSnapshots()
    const ids = Array.from({ length: 1020 }, () => uuidV7())
    for (let i = 0; i < ids.length; i += 60) {
      await Promise.all(
        ids.slice(i, i + 60).map((id) => ours.saveSnapshot({ location: loc('bulk'), snapshotId: id, isLatest: false, snapshot: { id } as any })),
      )
    }
    expect((await listKeys('bulk/'))[0]).toMatch(/^bulk\/scopes\/agent\/default\/snapshots\/immutable_history\/snapshot_/)
    expect(await ours.listSnapshotIds({ location: loc('bulk') })).toEqual([...ids].sort())
    expect(await sdkSnapshots().listSnapshotIds({ location: loc('bulk'), limit: 1005 })).toEqual(
      await ours.listSnapshotIds({ location: loc('bulk'), limit: 1005 }),
    )
    await ours.deleteSession({ sessionId: 'bulk' })
    expect(await listKeys('bulk/')).toEqual([])
  })

  test('request failures are SessionErrors with the SDK messages', async () => {
    const ours = new S3SnapshotStorage({
      bucket: 'no-such-bucket',
      ...garage.connection,
      maxAttempts: 1,
    })
    const sdk = new SdkS3SnapshotStorage({ bucket: 'no-such-bucket', s3Client: client })
    for (const op of [
      (s: any) => s.saveSnapshot({ location: loc('s'), snapshotId: 'x', isLatest: true, snapshot: {} }),
      (s: any) => s.loadSnapshot({ location: loc('s') }),
      (s: any) => s.listSnapshotIds({ location: loc('s') }),
      (s: any) => s.deleteSession({ sessionId: 's' }),
    ]) {
      const [a, b] = [await outcome(() => op(sdk)), await outcome(() => op(ours))]
      expect(b).toEqual(a)
    }
  })

  const AGENT = fileURLToPath(new URL('./fixtures/s3-session-agent.mjs', import.meta.url))

  /** Runs the fixture: one turn of a SessionManager-backed agent in a fresh process. */
  function runAgent(impl: 'sdk' | 'ours', sessionId: string, prompt: string): Promise<any[]> {
    return new Promise((resolve, reject) => {
      const env = {
        ...process.env,
        S3_ENDPOINT: garage.endpoint,
        S3_BUCKET: garage.bucket,
        S3_ACCESS_KEY: garage.accessKeyId,
        S3_SECRET_KEY: garage.secretAccessKey,
        S3_PREFIX: 'procs/x',
      }
      const child = spawn(process.execPath, [AGENT, impl, sessionId, prompt], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      let err = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (err += d))
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}: ${err}`))))
    })
  }

  const texts = (messages: any[]) => messages.map((m) => `${m.role}: ${m.content.map((c: any) => c.text).join('')}`)

  test('a session saved by one process resumes in another, both directions with the SDK', { timeout: 120_000 }, async () => {
    for (const [first, second] of [
      ['ours', 'sdk'],
      ['sdk', 'ours'],
    ] as const) {
      const sessionId = `proc-${first}-${second}`
      expect(texts(await runAgent(first, sessionId, 'hello'))).toEqual(['user: hello', 'assistant: reply 1'])
      expect(texts(await runAgent(second, sessionId, 'again'))).toEqual([
        'user: hello',
        'assistant: reply 1',
        'user: again',
        'assistant: reply 3',
      ])
      expect(texts(await runAgent(first, sessionId, 'third'))).toHaveLength(6)
    }
    const keys = await listKeys('procs/x/proc-ours-sdk/')
    expect(keys.some((k) => /^procs\/x\/proc-ours-sdk\/scopes\/agent\/[^/]+\/snapshots\/snapshot_latest\.json$/.test(k))).toBe(true)
  })
})

describe('S3Storage lifecycle', () => {
  const T0 = 1_800_000_000_000
  const keyOf = (ref: string) => ref.slice(`s3://${garage.bucket}/`.length)

  test('TTL and session as object metadata; expired objects refused (and deleted) at once, swept, uncounted', async () => {
    const clock = { now: T0 }
    const prefix = `life-${uuidV7()}/`
    const s3 = storage({ prefix, ttlSeconds: 60, clock: () => clock.now })
    const plugin = new ContextOffloader({ storage: s3 })
    const a = (await plugin.offload('a'.repeat(20_000), { key: 'a', sessionId: 'user 1' })).references[0].reference
    const b = (await plugin.offload('b'.repeat(30_000), { key: 'b', sessionId: 'user 1', ttlSeconds: 3_600 })).references[0].reference
    const c = (await plugin.offload('c'.repeat(40_000), { key: 'c', sessionId: 'user-2', ttlSeconds: 7_200 })).references[0].reference
    const head = await client.send(new HeadObjectCommand({ Bucket: garage.bucket, Key: keyOf(a) }))
    expect(head.Metadata).toEqual({ 'offloader-expires': String(T0 + 60_000), 'offloader-session': 'user%201' })
    expect(await s3.stats()).toEqual({
      artifacts: 3,
      bytes: 90_000,
      storedBytes: 90_000,
      sessions: { 'user 1': { artifacts: 2, bytes: 50_000 }, 'user-2': { artifacts: 1, bytes: 40_000 } },
    })
    clock.now += 60_000
    await expect(s3.retrieve(a)).rejects.toThrow(`Reference not found (expired): ${a}`)
    expect(await listKeys(prefix)).not.toContain(keyOf(a))
    clock.now += 3_600_000 - 60_000
    expect((await s3.stats()).artifacts).toBe(1)
    expect(await s3.cleanupExpired()).toBe(1)
    expect(await listKeys(prefix)).toEqual([keyOf(c)])
    expect(await s3.deleteSession('user-2')).toBe(1)
    expect(await listKeys(prefix)).toEqual([])
    void b
  })

  test('unified keys under the same prefix are never swept; bad options are refused', async () => {
    const prefix = `life-${uuidV7()}/`
    const s3 = storage({ prefix, ttlSeconds: 1, clock: () => T0 })
    await s3.write('notes/keep', enc('value'))
    await s3.store('k', enc('v'), 'text/plain')
    const later = storage({ prefix, clock: () => T0 + 5_000 })
    expect(await later.cleanupExpired()).toBe(1)
    expect(dec((await later.read('notes/keep'))!)).toBe('value')
    expect(() => storage({ maxBytes: 100 })).toThrow('S3Storage has no maxBytes budget')
    expect(() => storage({ dedup: true })).toThrow('S3Storage does not deduplicate')
    expect(() => storage({ ttlSeconds: -5 })).toThrow(RangeError)
  })
})

describe('S3Storage: the blocks of a failed offload', () => {
  test('are removed (artifact objects only: unified keys and other buckets stay)', async () => {
    const prefix = `discard-${uuidV7()}/`
    const s3 = storage({ prefix })
    const a = await s3.store('a', enc('first'), 'text/plain')
    const b = await s3.store('b', enc('second'), 'text/plain')
    await s3.write('notes/keep', enc('value'))
    const { NATIVE } = await import('../lib/storage/native-backed.js')
    const removed = await (s3 as any)[NATIVE].discard([a, `${prefix}notes/keep`, `s3://other-bucket/${prefix}x`, 'not a reference'])
    expect(removed).toBe(1)
    const keys = await listKeys(prefix)
    expect(keys).toContain(`${prefix}notes/keep`)
    expect(keys.filter((k) => /\/\d+_\d+_/.test(k))).toEqual([b.slice(`s3://${garage.bucket}/`.length)])
    // Through the plugin: a manifest entry that cannot be written fails the offload and
    // its block goes.
    const failing = storage({ prefix })
    const manifest = failing.namespace('offload-manifest')
    const broken = Object.create(failing)
    broken.namespace = (p: string) => (p === 'offload-manifest' ? { ...manifest, write: async () => { throw new Error('manifest write refused') } } : failing.namespace(p))
    const plugin = new ContextOffloader({ storage: broken, references: 'opaque' })
    await expect(plugin.offload('x\n'.repeat(5_000), { key: 'fails', sessionId: 'user-1' })).rejects.toThrow(/offload failed/)
    await new Promise((r) => setTimeout(r, 500))
    expect((await listKeys(prefix)).filter((k) => k.includes('_fails_'))).toEqual([])
  })
})

describe('S3Storage under the core', () => {
  test('a re-send (reuse) is answered from the record after a restart, without downloading what was stored', async () => {
    const prefix = `reuse-${uuidV7()}/`
    const { Offloader } = await import('../core.js')
    const { NATIVE } = await import('../lib/storage/native-backed.js')
    const call = { toolName: 'logs', toolCallId: 'call_s3', content: 'line of a log\n'.repeat(4_000), sessionId: 'chat-1', reuse: true }
    const first = await new Offloader({ storage: storage({ prefix }) }).offloadResult(call)
    expect(first?.references[0]?.reference).toMatch(new RegExp(`^s3://${garage.bucket}/${prefix}\\d+_\\d+_call_s3_0`))
    const restartedStorage = storage({ prefix })
    const reads = vi.spyOn((restartedStorage as any)[NATIVE], 'retrieve')
    const again = await new Offloader({ storage: restartedStorage }).offloadResult(call)
    expect(again).toEqual(first)
    expect(reads).not.toHaveBeenCalled()
    expect((await listKeys(prefix)).filter((k) => k.includes('_call_s3_'))).toHaveLength(1)
  })
})
