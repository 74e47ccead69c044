// Counts in previews are written as the SDK writes them (`n.toLocaleString()` in the
// default locale); the fast path must agree with it for every integer.
import { expect, test } from 'vitest'
import { localeCount } from '../lib/numbers.js'
import { prng } from './helpers/harness.js'

test('localeCount equals toLocaleString for generated integers, edges and non-integers', () => {
  const rand = prng(0x5eed).next
  const values = [0, -0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 999_999, 1_000_000, -1, -999, -1000, -1_234_567,
    Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 53, 1e21, 1.5, -0.25, 1234.5678, NaN, Infinity, -Infinity]
  for (let i = 0; i < 20_000; i++) {
    const magnitude = 10 ** Math.floor(rand() * 16)
    values.push(Math.floor(rand() * magnitude) * (rand() < 0.1 ? -1 : 1))
  }
  for (const n of values) expect(localeCount(n), String(n)).toBe(n.toLocaleString())
})
