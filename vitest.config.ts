import { defineConfig } from 'vitest/config'

/** The states vitest reports for a test case. */
type Counts = { passed: number; failed: number; skipped: number }

/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, after the
 * default reporter's summary, so CI logs end with a count any tool can read. A test
 * that never finished (its worker crashed) counts as failed, and so does a file that
 * failed to load; an unhandled error counts when nothing else failed, so a run that
 * exits non-zero never reports `0 failed`.
 */
const closingLine = {
  onTestRunEnd(
    testModules: ReadonlyArray<{
      children: { allTests(): Iterable<{ result(): { state: string } }> }
      errors(): unknown[]
    }>,
    unhandledErrors: ReadonlyArray<unknown>,
  ) {
    const counts: Counts = { passed: 0, failed: 0, skipped: 0 }
    for (const module of testModules) {
      counts.failed += module.errors().length
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') counts.passed++
        else if (state === 'skipped') counts.skipped++
        else counts.failed++
      }
    }
    if (counts.failed === 0) counts.failed = unhandledErrors.length
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`)
  },
}

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // Native addon + child processes: separate processes, not worker threads.
    pool: 'forks',
    // Suites drive real SDK agents and multi-megabyte tool results; the packaging
    // test sets its own, longer timeouts (npm installs, tsc).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default', closingLine],
  },
})
