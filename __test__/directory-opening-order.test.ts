// Opening a file storage's directory before the first offload (`NativeStore.open()`), and
// the order blocks are numbered in when stores yield to the event loop.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import * as native from '../binding.cjs'
import { ContextOffloader, FileStorage } from '../index.js'
import { Driven, ImageBlock, TextBlock, asJson, tempDir } from './helpers/harness.js'

const work = tempDir('co-opening-attack-')
afterAll(() => work.cleanup())

describe('opening the directory before the first offload', () => {
  it("sweeps what expired by the storage's clock, not by the wall clock", async () => {
    // A storage with an injected clock ten days behind the wall clock: what it stored with a
    // one-hour TTL has not expired by that clock. Another instance on the directory (a
    // restart) with the same clock must keep it when its first offload opens the directory,
    // as it does when its first operation is a plain store or a retrieve.
    const dir = join(work.path, 'clock')
    const clock = () => Date.now() - 10 * 86_400_000
    const before = new FileStorage({ artifactDir: dir, ttlSeconds: 3600, clock })
    const ref = await before.store('earlier', new TextEncoder().encode('stored before the restart'))
    const file = join(dir, ref.split('/').pop()!)
    expect(existsSync(file)).toBe(true)

    const storage = new FileStorage({ artifactDir: dir, ttlSeconds: 3600, clock })
    const plugin = new ContextOffloader({ storage, maxResultTokens: 100, previewTokens: 10 })
    await new Driven(plugin).offload([new TextBlock('a line of the result\n'.repeat(300))])

    expect(existsSync(file), 'the artifact, unexpired by the storage clock, is still on disk').toBe(true)
    const { content } = await storage.retrieve(ref)
    expect(new TextDecoder().decode(content)).toBe('stored before the restart')
  })

  it('numbers the blocks of a result in block order when the inline-work budget runs out mid-result', async () => {
    // After the opening, stores run inline under the 2 ms budget (mustYield). A text block
    // whose inline write is slow (a busy disk) uses up the budget; the image block after it
    // goes through `store()`, which yields before it takes its number, so the text block
    // after the image is numbered first. The SDK numbers blocks in block order.
    const proto = native.NativeStore.prototype as any
    const storeLatin1Now = proto.storeLatin1Now
    proto.storeLatin1Now = function (this: unknown, ...args: unknown[]) {
      const start = performance.now()
      while (performance.now() - start < 3);
      return storeLatin1Now.apply(this, args)
    }
    try {
      const plugin = new ContextOffloader({ storage: new FileStorage(join(work.path, 'order')), maxResultTokens: 100, previewTokens: 10 })
      const image = new ImageBlock({ format: 'png', source: { bytes: new Uint8Array(5000).fill(7) } })
      const result = await new Driven(plugin).offload(
        [new TextBlock('first '.repeat(1000)), image, new TextBlock('second '.repeat(1000))],
        { toolUseId: 'order' },
      )
      const text = asJson(result).toolResult.content[0].text as string
      const numbers = [...text.matchAll(/\d{13}_(\d+)_order_(\d)/g)].map((m) => `block ${m[2]}: ${m[1]}`)
      expect(numbers).toEqual(['block 0: 1', 'block 1: 2', 'block 2: 3'])
    } finally {
      proto.storeLatin1Now = storeLatin1Now
    }
  })
})
