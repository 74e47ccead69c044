// Native counts of long texts leave one core to the JavaScript thread: at most
// (cores - 1) run on worker threads at once, whatever asks for them (a conversation's
// messages through withNativeTokenCounting, the windows of an estimate).
import { availableParallelism } from 'node:os'
import { expect, test } from 'vitest'
import { createCounting, createLimiter } from '../lib/counting.js'

test('the limiter runs tasks in order with at most `limit` in flight, and passes results and errors through', async () => {
  const limit = createLimiter(2)
  let inFlight = 0
  let most = 0
  const started: number[] = []
  const results = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) =>
      limit(async () => {
        started.push(i)
        inFlight += 1
        most = Math.max(most, inFlight)
        await new Promise((r) => setTimeout(r, 2 + (i % 3)))
        inFlight -= 1
        if (i === 5) throw new Error('task 5')
        return i * 10
      }),
    ),
  )
  expect(most).toBe(2)
  expect(started).toEqual([...Array(12).keys()])
  expect(results[5]).toMatchObject({ status: 'rejected', reason: { message: 'task 5' } })
  expect(results.filter((r) => r.status === 'fulfilled').map((r: any) => r.value)).toEqual([0, 10, 20, 30, 40, 60, 70, 80, 90, 100, 110])
})

test('withNativeTokenCounting counts four long messages with at most cores - 1 native counts at once', async () => {
  let inFlight = 0
  let most = 0
  const fakeNative = {
    countTokensSync: (text: string) => text.length,
    countTokens: async (text: string) => {
      inFlight += 1
      most = Math.max(most, inFlight)
      await new Promise((r) => setTimeout(r, 5))
      inFlight -= 1
      return text.length
    },
  }
  const counting = createCounting(fakeNative as any, { countTokensSync: () => 0 } as any)
  const model = counting.withNativeTokenCounting({ countTokens: async () => 0 } as any)
  const long = 'x'.repeat(100_000)
  const messages = Array.from({ length: 4 }, (_, i) => ({ role: 'user', content: [{ type: 'textBlock', text: `${i}${long}` }] }))
  expect(await model.countTokens(messages as any)).toBe(4 * 100_001)
  expect(most).toBe(Math.min(4, Math.max(1, availableParallelism() - 1)))
})
