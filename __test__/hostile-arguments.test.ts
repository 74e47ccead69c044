// "No panic crosses the FFI boundary", attacked: every export of the package and of the
// native binding is driven with hostile arguments in a child process (an abort there
// cannot take the test runner down), and the numeric options the SDK accepts behave.
import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, tool } from '@strands-agents/sdk'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ContextOffloader, InMemoryStorage, S3SnapshotStorage, S3Storage } from '../index.js'
import { ScriptedModel, tempDir, textTurn, toolCallTurn } from './helpers/harness'

const FUZZER = fileURLToPath(new URL('./fixtures/fuzz-exports.mjs', import.meta.url))

describe('hostile arguments to every export', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: the process never aborts, no Rust panic is reached, every call settles`, { timeout: 120_000 }, () => {
      const work = tempDir('co-fuzz-')
      try {
        // A nested working directory: relative paths the fuzzer makes up stay inside it.
        const cwd = join(work.path, 'a', 'b')
        mkdirSync(cwd, { recursive: true })
        const run = spawnSync(process.execPath, [FUZZER, String(seed), '15'], {
          cwd,
          encoding: 'utf8',
          maxBuffer: 256 << 20,
          env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true', RUST_BACKTRACE: '0' },
          timeout: 110_000,
        })
        expect(run.signal, run.stderr.slice(-2000)).toBeNull()
        expect(run.status, run.stderr.slice(-2000)).toBe(0)
        expect(run.stderr).not.toContain('panicked')
        const summary = JSON.parse(run.stdout.trim().split('\n').pop()!)
        expect(summary.unsettled).toEqual([])
        expect(summary.calls).toBeGreaterThan(10_000)
      } finally {
        work.cleanup()
      }
    })
  }

  it('S3 options past what the native side takes are clear errors, not aborts', () => {
    const base = { endpoint: 'http://127.0.0.1:1', forcePathStyle: true }
    for (const timeoutMs of [1e300, Infinity, NaN, -1, 0]) {
      expect(() => new S3Storage('b', { ...base, timeoutMs })).toThrow(/timeoutMs must be a number of milliseconds/)
      expect(() => new S3SnapshotStorage({ bucket: 'b', ...base, timeoutMs })).toThrow(/timeoutMs must be/)
    }
    expect(() => new S3Storage('b', { ...base, maxAttempts: 1.5 })).toThrow(/maxAttempts must be an integer from 1 to 100, got number 1.5/)
    expect(() => new S3Storage('b', { ...base, maxInFlight: 0 })).toThrow(RangeError)
    expect(() => new S3Storage('b', { ...base, timeoutMs: '5' as never })).toThrow(TypeError)
    expect(() => new S3Storage('b'.repeat(300), base)).toThrow(/bucket must be 1 to 255 characters/)
    expect(() => new S3Storage('b', { endpoint: 'not a url' })).toThrow(/endpoint must be an http/)
    expect(() => new S3Storage('b', { ...base, prefix: 'p'.repeat(2000) })).toThrow(/at most 1024 bytes/)
  })

  it('evictAfterTurns and maxResultTokens refuse NaN and non-numbers with clear errors', () => {
    expect(() => new InMemoryStorage(NaN)).toThrow(/evictAfterTurns must be a positive number of cycles or null, got number NaN/)
    expect(() => new InMemoryStorage('5' as never)).toThrow(TypeError)
    expect(() => new ContextOffloader({ maxResultTokens: NaN })).toThrow(/maxResultTokens must be a positive number of tokens \(or Infinity\), got number NaN/)
    expect(() => new ContextOffloader({ maxResultTokens: '100' as never })).toThrow(TypeError)
    expect(() => new ContextOffloader({ previewTokens: NaN })).toThrow(/previewTokens must be a non-negative number/)
  })
})

describe('maxResultTokens values the SDK accepts', () => {
  /** Runs a real Agent whose tool returns `result`; resolves with what the model saw next. */
  async function run(offloader: ContextOffloader, result: string): Promise<string> {
    const model = new ScriptedModel([() => toolCallTurn('big', 't1', {}), () => textTurn('done')])
    const big = tool({ name: 'big', description: 'big', inputSchema: z.object({}), callback: () => result })
    const agent = new Agent({ model, printer: false, tools: [big], plugins: [offloader] })
    await agent.invoke('go')
    return JSON.stringify(model.seen[1])
  }

  const text = 'word '.repeat(4000) // 4,000 o200k tokens

  for (const tokenizer of ['o200k_base', 'heuristic', 'model'] as const) {
    it(`a fraction is compared as a real number (${tokenizer})`, async () => {
      const over = await run(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer, maxResultTokens: 999.5, previewTokens: 10 }), text)
      expect(over).toContain('[Offloaded: 1 blocks')
      const under = await run(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer, maxResultTokens: 40_000.5, previewTokens: 10 }), text)
      expect(under).not.toContain('[Offloaded')
    })

    it(`Infinity offloads only what shouldOffload picks (${tokenizer})`, async () => {
      const never = await run(new ContextOffloader({ storage: new InMemoryStorage(), tokenizer, maxResultTokens: Infinity }), text.repeat(50))
      expect(never).not.toContain('[Offloaded')
      const forced = await run(
        new ContextOffloader({ storage: new InMemoryStorage(), tokenizer, maxResultTokens: Infinity, shouldOffload: () => true }),
        text,
      )
      expect(forced).toContain('[Offloaded: 1 blocks')
    })
  }
})

describe('offloads handed content that is not a list of blocks', () => {
  it('a typed array as content rejects with a clear error and leaves no rejection unhandled', async () => {
    const lost: unknown[] = []
    const onLost = (reason: unknown) => lost.push(reason)
    process.on('unhandledRejection', onLost)
    try {
      const plugin: any = new ContextOffloader({ storage: new InMemoryStorage() })
      for (const key of [Symbol('s'), 'k']) {
        for (const content of [new Uint8Array([0xff, 0xfe, 0]), new Uint8Array(0), 'text', { length: 2 }]) {
          await expect(plugin._offloadBlocks(content, key, undefined, { exceeds: true, tokens: 10 })).rejects.toThrow(
            /content must be an array of blocks/,
          )
        }
      }
      // Unhandled rejections are reported after the microtasks of the turn that made them.
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(lost).toEqual([])
    } finally {
      process.off('unhandledRejection', onLost)
    }
  })
})
