// The short-text path: a result that is one text block of at most SHORT_TEXT_UNITS units,
// under options that keep no manifest, is offloaded in one synchronous pass instead of
// the general pipeline. These tests drive both paths, and the SDK's plugin, with the
// same seeded hostile texts: what the model sees, what is stored and the counters must
// not tell the paths apart.
import { rmSync, writeFileSync } from 'node:fs'
import { afterAll, describe, expect, test, vi } from 'vitest'
import * as native from '../binding.cjs'
import * as ours from '../index.js'
import { OffloadEngine } from '../lib/engine.js'
import { INLINE_LATIN1_UNITS, SHORT_TEXT_UNITS } from '../lib/native.js'
import { Driven, ScriptedModel, TextBlock, dropLoneSurrogates, hasLoneSurrogate, prng, sdkOffloader, tempDir } from './helpers/harness.js'

const T = 120_000
/** The native default of `setSlowInlineWriteMicros` (`src/store.rs`). */
const DEFAULT_SLOW_INLINE_WRITE_MICROS = 1_000
const turn = () => new Promise((resolve) => setImmediate(resolve))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

/** A model that counts as the SDK's base class does, through an override: the general path. */
class OverridingModel extends ScriptedModel {
  override countTokens(messages: any) {
    return super.countTokens(messages)
  }
}

/** Our plugin on `storage`; with `general`, its short path declines every result. */
function oursDriven(storage: any, config: any, general: boolean) {
  const driven = new Driven(new ours.ContextOffloader({ ...config, storage }))
  if (general) driven.plugin._offloadShortText = () => false
  return driven
}

/** Code units drawn from one of several alphabets, hostile ones included. */
function randomText(r: ReturnType<typeof prng>, length: number): string {
  const alphabets = [
    () => String.fromCharCode(r.int(0x20, 0x7e)),
    () => String.fromCharCode(r.int(0, 0xff)), // Latin-1, NUL and NEL included
    () => r.pick(['é', '中', 'ß', 'ю', '\n', ' ', 'a']),
    () => r.pick(['😀', '\u{10FFFF}', '\u{1F468}\u200d\u{1F469}']),
    () => r.pick(['\ud83d', '\ude00', 'x']), // lone surrogates
  ]
  const kinds = r.int(1, alphabets.length)
  let out = ''
  while (out.length < length) out += alphabets[r.int(0, kinds - 1)]!()
  return out.slice(0, length)
}

/** `sdk`, or `sdk` without the lone surrogate halves it cut when ours has none there. */
function sameAsSdk(o: string, sdk: string): boolean {
  return o === sdk || (hasLoneSurrogate(sdk) && o === dropLoneSurrogates(sdk))
}

/** The text stored under the reference an offload's replacement lists (read from the plugin's storage). */
async function retrieveAll(driven: Driven, text: string): Promise<string> {
  const ref = text.slice(text.lastIndexOf('[Stored references:]\n') + 21).trim().split(' (')[0]!
  const { content } = await driven.plugin._storageForAgent(driven.agent).retrieve(ref)
  return new TextDecoder().decode(content)
}

describe('the short-text path', () => {
  test('is the path taken with default options; a model that counts itself takes the general one', { timeout: T }, async () => {
    const general = vi.spyOn(OffloadEngine.prototype, 'offloadBlocks')
    const short = vi.spyOn(OffloadEngine.prototype, 'offloadShortText')
    try {
      const fast = oursDriven(new ours.InMemoryStorage(), {}, false)
      await fast.offload([new TextBlock('x'.repeat(20_000))])
      expect(short).toHaveReturnedWith(expect.stringMatching(/^\[Offloaded: 1 blocks/))
      expect(general).not.toHaveBeenCalled()
      const declined = oursDriven(new ours.InMemoryStorage(), {}, true)
      await declined.offload([new TextBlock('x'.repeat(20_000))])
      expect(general).toHaveBeenCalledTimes(1)
      // A model of the agent's own counts: the general path.
      const counted = oursDriven(new ours.InMemoryStorage(), {}, false)
      counted.agent.model = new OverridingModel()
      await counted.offload([new TextBlock('x'.repeat(20_000))])
      expect(general).toHaveBeenCalledTimes(2)
      expect(short).toHaveBeenCalledTimes(1)
    } finally {
      general.mockRestore()
      short.mockRestore()
    }
  })

  test('seeded texts: the same replacement, stored text and counters on both paths, as the SDK', { timeout: T }, async () => {
    const r = prng(20261127)
    let offloaded = 0
    for (let round = 0; round < 12; round++) {
      const maxResultTokens = r.pick([1, 3, 40, 250, 2500])
      const previewTokens = r.int(0, maxResultTokens - 1)
      const config = { maxResultTokens, previewTokens, includeRetrievalTool: r.bool(0.8) }
      const fast = oursDriven(new ours.InMemoryStorage(), config, false)
      const general = oursDriven(new ours.InMemoryStorage(), config, true)
      const sdk = new Driven(new sdkOffloader.ContextOffloader({ ...config, storage: new sdkOffloader.InMemoryStorage() }))
      for (let i = 0; i < 25; i++) {
        // Around the threshold (4 characters per token), and now and then near the longest short text.
        const length = r.bool(0.1)
          ? r.pick([SHORT_TEXT_UNITS, INLINE_LATIN1_UNITS]) + r.int(-2, 2)
          : Math.max(0, maxResultTokens * 4 + r.int(-6, 6) + (r.bool(0.5) ? r.int(0, 3000) : 0))
        const text = randomText(r, length)
        const id = { toolUseId: `t${round}_${i}` }
        const [a, b, s] = [await fast.offload([new TextBlock(text)], id), await general.offload([new TextBlock(text)], id), await sdk.offload([new TextBlock(text)], id)]
        const [fastText, generalText, sdkText] = [a, b, s].map((x: any) => x.content[0].text as string)
        expect(fastText).toBe(generalText)
        expect(sameAsSdk(fastText, sdkText), `length ${length}, limit ${maxResultTokens}`).toBe(true)
        if (fastText.startsWith('[Offloaded:')) {
          offloaded++
          const [storedFast, storedGeneral] = [await retrieveAll(fast, fastText), await retrieveAll(general, generalText)]
          expect(storedFast).toBe(storedGeneral)
          // Lone halves are stored as U+FFFD, as TextEncoder writes them.
          expect(storedFast).toBe(new TextDecoder().decode(new TextEncoder().encode(text)))
        } else {
          expect(fastText).toBe(text)
        }
      }
      expect(fast.plugin.stats()).toEqual(general.plugin.stats())
    }
    expect(offloaded).toBeGreaterThan(150)
  })

  test('a result of another shape, or longer, goes the general way with the same outcome', { timeout: T }, async () => {
    const short = vi.spyOn(OffloadEngine.prototype, 'offloadShortText')
    try {
      const fast = oursDriven(new ours.InMemoryStorage(), { maxResultTokens: 10, previewTokens: 2 }, false)
      const sdk = new Driven(new sdkOffloader.ContextOffloader({ maxResultTokens: 10, previewTokens: 2, storage: new sdkOffloader.InMemoryStorage() }))
      const shapes = [
        () => [new TextBlock('a'.repeat(50)), new TextBlock('b'.repeat(50))],
        // Longer than a short text, and not one-byte.
        () => [new TextBlock('中'.repeat(SHORT_TEXT_UNITS + 1))],
        // One-byte, longer than a one-call copy.
        () => [new TextBlock('c'.repeat(INLINE_LATIN1_UNITS + 1))],
        // One-byte and short enough in units, but more than 1 MiB of UTF-8: refused natively.
        () => [new TextBlock('é'.repeat(INLINE_LATIN1_UNITS))],
        () => [new TextBlock('')],
      ]
      for (const shape of shapes) {
        const a: any = await fast.offload(shape(), { toolUseId: 'same' })
        const s: any = await sdk.offload(shape(), { toolUseId: 'same' })
        expect(a.content.map((c: any) => c.text)).toEqual(s.content.map((c: any) => c.text))
        const [ours, theirs] = [a, s].map((x) => x.content[0].text as string)
        if (ours.startsWith('[Offloaded:')) expect(await retrieveAll(fast, ours)).toBe(await retrieveAll(sdk, theirs))
      }
      // Only the one-block texts over the limit that the short path may take were offered
      // to its store (two-byte texts over 128K units and 1M UTF-8 bytes declined it).
      expect(short.mock.results.map((r) => r.value)).toEqual([undefined, undefined])
    } finally {
      short.mockRestore()
    }
  })

  test('a file storage: the first store opens the directory on the general path, the next ones are short', { timeout: T }, async () => {
    const dir = tempDir('co-short-')
    cleanups.push(dir.cleanup)
    const general = vi.spyOn(OffloadEngine.prototype, 'offloadBlocks')
    // Inline file writes are not paused by a slow write of another test, and each offload
    // starts a run of inline work (on a loaded machine either could send it the general way).
    native.setSlowInlineWriteMicros(4_000_000_000)
    try {
      await sleep(1100)
      const driven = oursDriven(new ours.FileStorage(dir.path), { maxResultTokens: 10, previewTokens: 2 }, false)
      const texts = ['first '.repeat(20), 'second '.repeat(20), 'third '.repeat(20)]
      for (const text of texts) {
        await turn()
        const out: any = await driven.offload([new TextBlock(text)])
        expect(await retrieveAll(driven, out.content[0].text)).toBe(text)
      }
      expect(general).toHaveBeenCalledTimes(1)
    } finally {
      native.setSlowInlineWriteMicros(DEFAULT_SLOW_INLINE_WRITE_MICROS)
      general.mockRestore()
    }
  })

  test('a store that throws: the failure is counted and `onStorageError` applies, as on the general path', { timeout: T }, async () => {
    const outcomes = []
    native.setSlowInlineWriteMicros(4_000_000_000)
    try {
      await sleep(1100)
      for (const onStorageError of ['keep', 'truncate'] as const) {
        for (const general of [false, true]) {
          const dir = tempDir('co-short-broken-')
          cleanups.push(dir.cleanup)
          const driven = oursDriven(new ours.FileStorage(dir.path), { maxResultTokens: 10, previewTokens: 2, onStorageError }, general)
          await driven.offload([new TextBlock('opens the directory '.repeat(5))])
          // The directory becomes a file: every inline write fails.
          rmSync(dir.path, { recursive: true, force: true })
          writeFileSync(dir.path, 'not a directory')
          await turn()
          const text = 'y'.repeat(200)
          const out: any = await driven.offload([new TextBlock(text)])
          outcomes.push({ onStorageError, text: out.content[0].text.replace(/\(.*\)/s, '(reason)'), errors: driven.plugin.stats().errors })
          rmSync(dir.path, { force: true })
        }
      }
    } finally {
      native.setSlowInlineWriteMicros(DEFAULT_SLOW_INLINE_WRITE_MICROS)
    }
    const [keepShort, keepGeneral, truncateShort, truncateGeneral] = outcomes
    expect(keepShort).toEqual(keepGeneral)
    expect(keepShort!.text).toBe('y'.repeat(200))
    expect(keepShort!.errors.offload).toBe(1)
    expect(truncateShort).toEqual(truncateGeneral)
    expect(truncateShort!.text).toMatch(/^\[Truncated: 1 blocks, ~50 tokens\./)
  })

  test('content that is not a text block object is left to the general path', { timeout: T }, async () => {
    for (const content of [[null], [undefined], [{ type: 'textBlock', text: 42 }], [{ type: 'textBlock' }]]) {
      const results = []
      for (const general of [false, true]) {
        const driven = oursDriven(new ours.InMemoryStorage(), { maxResultTokens: 10, previewTokens: 2 }, general)
        const out: any = await driven.offload(content as any).then(
          (r: any) => ({ content: JSON.stringify(r.content) }),
          (err: Error) => ({ thrown: err.message }),
        )
        results.push(out)
      }
      expect(results[0], JSON.stringify(content)).toEqual(results[1])
    }
  })

  test('a sandboxed storage that hands out no object: the general way, with the same outcome', { timeout: T }, async () => {
    const results = []
    for (const general of [false, true]) {
      // A unified storage whose per-agent view is not a storage at all.
      const broken: any = {
        write: async () => {},
        read: async () => null,
        delete: async () => {},
        list: async () => [],
        namespace() {
          return this
        },
        forSandbox: () => 'not a storage',
      }
      const driven = oursDriven(broken, { maxResultTokens: 10, previewTokens: 2, onStorageError: 'truncate' }, general)
      await turn()
      const out: any = await driven.offload([new TextBlock('z'.repeat(100))])
      results.push({ text: out.content[0].text, errors: driven.plugin.stats().errors })
    }
    expect(results[0]).toEqual(results[1])
    expect(results[0]!.text).toMatch(/^\[Truncated: 1 blocks, ~25 tokens\./)
  })

  test('an S3 storage (no inline store): the general way, with the same outcome', { timeout: T }, async () => {
    const results = []
    for (const general of [false, true]) {
      // Nothing listens on port 9: the store fails, after the request is made.
      const storage = new ours.S3Storage('bucket', { endpoint: 'http://127.0.0.1:9', maxAttempts: 1, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })
      const driven = oursDriven(storage, { maxResultTokens: 10, previewTokens: 2, onStorageError: 'truncate' }, general)
      await turn()
      const out: any = await driven.offload([new TextBlock('s3 '.repeat(100))])
      results.push({ text: out.content[0].text.replace(/\(.*\)/s, '(reason)'), errors: driven.plugin.stats().errors })
    }
    expect(results[0]).toEqual(results[1])
    expect(results[0]!.text).toMatch(/^\[Truncated: 1 blocks/)
  })

  test('an agent session id tags what the short path stores; a storage clock sends it the general way', { timeout: T }, async () => {
    const storage = new ours.InMemoryStorage()
    const driven = oursDriven(storage, { maxResultTokens: 10, previewTokens: 2 }, false)
    ;(driven.agent as any).sessionId = 'session-a'
    const stored: any = await driven.offload([new TextBlock('z'.repeat(100))])
    const reference = stored.content[0].text.split('[Stored references:]\n')[1].trim().split(' (')[0]
    expect(new TextDecoder().decode((await storage.retrieve(reference)).content)).toBe('z'.repeat(100))
    await storage.deleteSession('other-session')
    await expect(storage.retrieve(reference)).resolves.toBeTruthy()
    await storage.deleteSession('session-a')
    await expect(storage.retrieve(reference)).rejects.toThrow(/not found/i)

    const general = vi.spyOn(OffloadEngine.prototype, 'offloadBlocks')
    try {
      let now = Date.UTC(2026, 0, 1)
      const clocked = new ours.InMemoryStorage({ clock: () => now, ttlSeconds: 60 })
      const timed = oursDriven(clocked, { maxResultTokens: 10, previewTokens: 2 }, false)
      const out: any = await timed.offload([new TextBlock('q'.repeat(100))])
      expect(general).toHaveBeenCalledTimes(1)
      now += 61_000
      const answer = await timed.retrieve({ reference: out.content[0].text.split('[Stored references:]\n')[1].trim().split(' (')[0] })
      expect(answer.toolResult.content[0].text).toMatch(/not found|expired/i)
    } finally {
      general.mockRestore()
    }
  })
})
