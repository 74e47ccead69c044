// A 10 MB text result offloaded to FileStorage through our plugin must not monopolise the
// event loop: timers keep running during the offload. Lag is recorded, not asserted (the
// benchmark measures it).
import { afterAll, expect, test } from 'vitest'
import { statSync } from 'node:fs'
import * as ours from '../index.js'
import { Driven, TextBlock, asJson, tempDir, textOf } from './helpers/harness.js'

const work = tempDir('co-eventloop-')
afterAll(() => work.cleanup())

test('10 MB text result offloaded to FileStorage while timers keep firing', { timeout: 120_000 }, async () => {
  const line = 'ts=2024-06-01T10:00:00Z level=info worker=3 msg="batch processed" ünï 中文 😀\n'
  const text = line.repeat(Math.ceil((10 * 1024 * 1024) / line.length))
  expect(text.length).toBeGreaterThanOrEqual(10 * 1024 * 1024)
  const drv = new Driven(new ours.ContextOffloader({ storage: new ours.FileStorage(work.path) }))

  // warm up (first-use costs: directory creation, native thread pool)
  await drv.offload([new TextBlock('warm '.repeat(5_000))])

  const ticks: number[] = []
  let last = performance.now()
  let maxGap = 0
  const interval = setInterval(() => {
    const now = performance.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
    ticks.push(now)
  }, 1)
  let start = 0
  let end = 0
  let result: any
  try {
    // let the interval arm before starting
    await new Promise((r) => setTimeout(r, 5))
    last = performance.now()
    start = performance.now()
    result = asJson(await drv.offload([new TextBlock(text)]))
    end = performance.now()
  } finally {
    clearInterval(interval)
  }
  const during = ticks.filter((t) => t > start && t < end).length
  console.log(
    `event loop during a 10 MB offload: ${(end - start).toFixed(1)} ms, ${during} interval ticks, max gap ${maxGap.toFixed(1)} ms`,
  )

  // the offload worked
  const preview = textOf(result)
  expect(preview.startsWith('[Offloaded: 1 blocks, ~')).toBe(true)
  const ref = /\n {2}(\S+) \(text, ([\d,]+) chars\)/.exec(preview)!
  expect(Number(ref[2]!.replace(/,/g, ''))).toBe(text.length)
  expect(statSync(ref[1]!).size).toBe(Buffer.byteLength(text))
  const back = await new ours.FileStorage(work.path).retrieve(ref[1]!)
  expect(back.contentType).toBe('text/plain')
  expect(back.content.length).toBe(Buffer.byteLength(text))
  expect(Buffer.from(back.content).equals(Buffer.from(text))).toBe(true)
  const grep = textOf(await drv.retrieve({ reference: ref[1]!, line_range: { start: 100_000, end: 100_001 } }))
  expect(grep).toMatch(/^\[Lines 100000-100001 of \d+\]/)

  // timers ran while the offload was in progress
  expect(during).toBeGreaterThanOrEqual(1)
})
