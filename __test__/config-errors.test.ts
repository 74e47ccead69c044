// What a new user meets when an option is wrong: errors that name the option (and the
// default at fault), a clear error for a path given as `storage`, and a warning through
// the SDK's logger, once per key and process, for option names nothing reads.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { configureLogging } from '@strands-agents/sdk'
import { ContextOffloader as SdkContextOffloader } from '@strands-agents/sdk/vended-plugins/context-offloader'
import { InMemoryStorage as SdkUnifiedInMemoryStorage } from '@strands-agents/sdk/storage'
import { ContextOffloader, FileSnapshotStorage, FileStorage, InMemoryStorage, S3SnapshotStorage, S3Storage } from '../index.js'
import { closestName, editDistance } from '../lib/option-names.js'
import { tempDir } from './helpers/harness'

describe('previewTokens and maxResultTokens', () => {
  it('maxResultTokens below the default previewTokens names the default (the SDK throws here too)', () => {
    expect(() => new SdkContextOffloader({ maxResultTokens: 500 })).toThrow('previewTokens must be less than maxResultTokens')
    expect(() => new ContextOffloader({ maxResultTokens: 500 })).toThrow(/^previewTokens \(default 1,000\) must be less than maxResultTokens \(500\)/)
    expect(() => new ContextOffloader({ maxResultTokens: 1_000 })).toThrow('previewTokens (default 1,000) must be less than maxResultTokens (1,000)')
    // Below the default preview it works once previewTokens is set, as the error says.
    expect(() => new ContextOffloader({ maxResultTokens: 500, previewTokens: 200 })).not.toThrow()
  })

  it('values the user set are named with their values, a default maxResultTokens as the default', () => {
    expect(() => new ContextOffloader({ maxResultTokens: 500, previewTokens: 600 })).toThrow('previewTokens (600) must be less than maxResultTokens (500)')
    expect(() => new ContextOffloader({ previewTokens: 3_000 })).toThrow('previewTokens (3,000) must be less than maxResultTokens (default 2,500)')
    expect(() => new ContextOffloader({ maxResultTokens: 0 })).toThrow('maxResultTokens must be positive, got 0')
    expect(() => new ContextOffloader({ previewTokens: -1 })).toThrow('previewTokens must be non-negative, got -1')
  })
})

describe('storage', () => {
  it("a path gets an error naming storage and suggesting new FileStorage('./dir')", () => {
    const attempt = () => new ContextOffloader({ storage: './dir' as any })
    expect(attempt).toThrow(TypeError)
    expect(attempt).toThrow("storage must be a storage object, not a path: use storage: new FileStorage('./dir')")
    expect(attempt).not.toThrow(/'in' operator/)
  })

  it('anything that is not a storage is refused naming storage; a storage of either interface, null and undefined are not', () => {
    for (const bad of [5, true, {}, [], { store() {} }, { write() {}, read() {} }, () => {}]) {
      expect(() => new ContextOffloader({ storage: bad as any }), JSON.stringify(bad)).toThrow(/^storage must be an offloader storage .* or a unified storage/)
    }
    const dir = tempDir('co-config-')
    try {
      for (const good of [undefined, null, new InMemoryStorage(), new FileStorage(dir.path), new SdkUnifiedInMemoryStorage(), { store: async () => 'r', retrieve: async () => ({ content: new Uint8Array(), contentType: 'text/plain' }) }]) {
        expect(() => new ContextOffloader({ storage: good as any })).not.toThrow()
      }
    } finally {
      dir.cleanup()
    }
  })
})

describe('every option of the wrong type is an error naming it', () => {
  const cases: [string, unknown][] = [
    ['maxResultTokens', '2500'],
    ['previewTokens', {}],
    ['evictAfterCycles', 2.5],
    ['ttlSeconds', '60'],
    ['tokenizer', 'gpt-4'],
    ['exactCountLimit', '1e6'],
    ['preview', 7],
    ['headShare', 2],
    ['shouldOffload', true],
    ['neverOffload', 'shell'],
    ['onStorageError', 'drop'],
    ['references', true],
    ['retrieval', 'full'],
    ['offloadErrors', 1],
  ]
  it.each(cases)('%s: %j', (option, value) => {
    expect(() => new ContextOffloader({ [option]: value } as any)).toThrow(option)
  })

  it('options that are not an object', () => {
    for (const bad of [null, 'storage', 42, []]) {
      expect(() => new ContextOffloader(bad as any)).toThrow(/^ContextOffloader options must be an object/)
    }
  })

  it('storages: durable must be a boolean, S3Storage options an object', () => {
    const dir = tempDir('co-config-')
    try {
      expect(() => new FileStorage({ artifactDir: dir.path, durable: 'yes' as any })).toThrow('FileStorage durable must be a boolean')
      expect(() => new FileSnapshotStorage({ baseDir: dir.path, durable: 1 as any })).toThrow('FileSnapshotStorage durable must be a boolean')
      expect(() => new S3Storage('bucket', 'us-east-1' as any)).toThrow('S3Storage options must be an object')
    } finally {
      dir.cleanup()
    }
  })
})

describe('unknown option names', () => {
  let warnings: string[]
  beforeEach(() => {
    warnings = []
    configureLogging({ debug() {}, info() {}, warn: (...args: unknown[]) => warnings.push(args.map(String).join(' ')), error() {} })
  })
  afterEach(() => {
    configureLogging({ debug() {}, info() {}, warn: (...args: unknown[]) => console.warn(...args), error: (...args: unknown[]) => console.error(...args) })
  })

  it('warn through the SDK logger, naming the closest known option, once per key and process', () => {
    new ContextOffloader({ maxResultToken: 3_000 } as any)
    new ContextOffloader({ maxResultToken: 4_000 } as any)
    expect(warnings).toEqual(['ContextOffloader: unknown option "maxResultToken" (did you mean "maxResultTokens"?)'])
    new ContextOffloader({ previewtokens: 10, tokeniser: 'heuristic', zzzqqq: 1 } as any)
    expect(warnings.slice(1)).toEqual([
      'ContextOffloader: unknown option "previewtokens" (did you mean "previewTokens"?)',
      'ContextOffloader: unknown option "tokeniser" (did you mean "tokenizer"?)',
      'ContextOffloader: unknown option "zzzqqq" (it is ignored)',
    ])
  })

  it("the SDK's own options and ours warn about nothing; an unknown option never throws", () => {
    new ContextOffloader({ storage: new InMemoryStorage(), maxResultTokens: 3_000, previewTokens: 500, includeRetrievalTool: false, evictAfterCycles: null, tokenizer: 'heuristic', references: 'opaque', retrieval: 'extended' })
    expect(warnings).toEqual([])
    expect(() => new ContextOffloader({ somethingElse: { nested: true } } as any)).not.toThrow()
    expect(warnings).toHaveLength(1)
  })

  it("the storages' option objects too, with a note for the SDK's options ours take in another form", () => {
    const dir = tempDir('co-config-')
    try {
      new InMemoryStorage({ evictAfterTurn: 3 } as any)
      new FileStorage({ artifactDir: dir.path, ttlSecond: 5 } as any)
      new FileStorage({ artifactDir: dir.path, sandbox: {} } as any)
      new S3Storage('bucket', { regoin: 'eu-west-1', s3Client: {} } as any)
      new FileSnapshotStorage({ baseDir: dir.path, durabel: true } as any)
      new S3SnapshotStorage({ bucket: 'bucket', prefx: 'sessions' } as any)
      expect(warnings).toEqual([
        'InMemoryStorage: unknown option "evictAfterTurn" (did you mean "evictAfterTurns"?)',
        'FileStorage: unknown option "ttlSecond" (did you mean "ttlSeconds"?)',
        'FileStorage: unknown option "sandbox" (not taken: the plugin stores through the sandbox of each agent whose tools run in one)',
        'S3Storage: unknown option "regoin" (did you mean "region"?)',
        'S3Storage: unknown option "s3Client" (not taken: requests run natively; pass region, endpoint, forcePathStyle and credentials instead)',
        'FileSnapshotStorage: unknown option "durabel" (did you mean "durable"?)',
        'S3SnapshotStorage: unknown option "prefx" (did you mean "prefix"?)',
      ])
      // Documented options of every storage warn about nothing.
      warnings.length = 0
      new InMemoryStorage({ evictAfterTurns: 3, ttlSeconds: 60, maxBytes: 1_000, dedup: true })
      new FileStorage({ artifactDir: dir.path, durable: false, ttlSeconds: 60, cleanupIntervalSeconds: 60, clock: Date.now })
      new S3Storage('bucket', { prefix: 'p/', region: 'eu-west-1', endpoint: 'http://127.0.0.1:3900', forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, timeoutMs: 1_000, maxAttempts: 2, maxInFlight: 4, ttlSeconds: 60 })
      new S3SnapshotStorage({ bucket: 'bucket', prefix: 's', region: 'eu-west-1', endpoint: 'http://127.0.0.1:3900', forcePathStyle: true, maxInFlight: 2 })
      expect(warnings).toEqual([])
    } finally {
      dir.cleanup()
    }
  })

  it('closest names: case-insensitive edit distance, nothing suggested when nothing is close', () => {
    expect(editDistance('maxResultToken', 'maxResultTokens')).toBe(1)
    expect(editDistance('MAXRESULTTOKENS', 'maxResultTokens')).toBe(0)
    expect(closestName('evictAfterCycle', ['evictAfterCycles', 'maxResultTokens'])).toBe('evictAfterCycles')
    expect(closestName('colour', ['storage', 'preview'])).toBeUndefined()
  })
})
