// V8's garbage collector for tests that measure what a step leaves alive.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let collector: (() => void) | undefined

/** One full garbage collection (V8's `gc`, exposed on first use). */
export function gc(): void {
  if (!collector) {
    setFlagsFromString('--expose-gc')
    collector = runInNewContext('gc') as () => void
  }
  collector()
}

/** Bytes of the V8 heap in use after two full collections. */
export function heapUsed(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
