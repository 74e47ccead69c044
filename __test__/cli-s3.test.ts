// The command-line tool on S3: a single-node Garage on 127.0.0.1 (scripts/garage.mjs),
// with the region, endpoint and credentials given as operators give them, through the
// AWS environment variables, plus --path-style.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ContextOffloader, S3SnapshotStorage, S3Storage } from '../index.js'
import { startGarage } from '../scripts/garage.mjs'
import { CLI, cli, expectOneLineError, jsonLines } from './helpers/cli.js'

let garage: Awaited<ReturnType<typeof startGarage>>
let env: Record<string, string>

beforeAll(async () => {
  garage = await startGarage()
  env = {
    AWS_ACCESS_KEY_ID: garage.accessKeyId,
    AWS_SECRET_ACCESS_KEY: garage.secretAccessKey,
    AWS_REGION: garage.region,
    AWS_ENDPOINT_URL: garage.endpoint,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
  }
}, 120_000)

afterAll(async () => {
  await garage?.stop()
})

const HOUR = 3_600_000
const enc = (s: string) => new TextEncoder().encode(s)
const run = (args: string[], extra: Record<string, string | undefined> = {}) => cli([...args, '--path-style'], { ...env, ...extra })

function storage(prefix: string, options: Record<string, unknown> = {}) {
  return new S3Storage(garage.bucket, {
    prefix,
    ...garage.connection,
    ...options,
  })
}

describe('artifact commands on S3', () => {
  test('ls --json, show, grep, stats and gc on s3://bucket/prefix', { timeout: 120_000 }, async () => {
    const prefix = `cli-${Date.now()}/`
    const store = `s3://${garage.bucket}/${prefix}`
    const now = Date.now()
    const expiredPlugin = new ContextOffloader({ storage: storage(prefix, { clock: () => now - 2 * HOUR, ttlSeconds: 3600 }) })
    const live = storage(prefix, { ttlSeconds: 86_400 })
    const livePlugin = new ContextOffloader({ storage: live })
    const log = Array.from({ length: 3_000 }, (_, i) => (i % 101 === 7 ? `line ${i} ERROR timeout` : `line ${i} fine`)).join('\n')
    const expired = (await expiredPlugin.offload('e'.repeat(30_000), { key: 'gone', sessionId: 's-old' })).references[0]!.reference
    const logRef = (await livePlugin.offload(log, { key: 'log', sessionId: 's1' })).references[0]!.reference
    const png = await live.store('png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), 'image/png')
    expect(logRef.startsWith(`s3://${garage.bucket}/${prefix}`)).toBe(true)

    const ls = await run(['ls', store, '--json'])
    expect(ls.code, ls.stderr).toBe(0)
    const rows = jsonLines(ls.stdout)
    expect(rows.map((r) => r.reference).sort()).toEqual([logRef, png].sort())
    for (const r of rows) expect(Object.keys(r)).toEqual(['reference', 'id', 'contentType', 'bytes', 'session', 'created', 'expires'])
    const byRef = Object.fromEntries(rows.map((r) => [r.reference, r]))
    expect(byRef[logRef]).toMatchObject({ contentType: 'text/plain', bytes: Buffer.byteLength(log), session: 's1' })
    expect(byRef[png]).toMatchObject({ contentType: 'image/png', bytes: 7, session: null })
    expect(jsonLines((await run(['ls', store, '--json', '--expired'])).stdout).map((r) => r.reference)).toEqual([expired])
    // Reading an expired object refuses it and leaves it for gc.
    expectOneLineError(await run(['show', store, expired]), expect, /gone \(expired\)/)
    expect(jsonLines((await run(['ls', store, '--json', '--expired'])).stdout).map((r) => r.reference)).toEqual([expired])

    const shown = await run(['show', store, logRef])
    expect(shown.stdout).toBe(log)
    const binary = await run(['show', store, png])
    expect([...binary.stdoutBytes]).toEqual([0x89, 0x50, 0x4e, 0x47, 0, 1, 2])

    // grep prints exactly what the retrieval tool answers for the same reference.
    const tool = new ContextOffloader({ storage: live }).getTools()[0] as any
    const gen = tool.stream({ toolUse: { name: tool.name, toolUseId: 'c', input: { reference: logRef, pattern: 'ERROR', context_lines: 1 } } })
    let step = await gen.next()
    while (!step.done) step = await gen.next()
    const answer = step.value.content[0].text as string
    const grep = await run(['grep', store, logRef, 'ERROR', '-C', '1', '--max-chars', '10000'])
    expect(grep.code, grep.stderr).toBe(0)
    expect(grep.stdout).toBe(`${answer}\n`)
    expect((await run(['grep', store, logRef, 'nothing like this'])).code).toBe(1)

    const stats = JSON.parse((await run(['stats', store, '--json'])).stdout)
    expect(stats).toEqual(await live.stats())
    expect(stats).toMatchObject({ artifacts: 2, sessions: { s1: { artifacts: 1 } } })

    const dry = JSON.parse((await run(['gc', store, '--expired', '--dry-run', '--json'])).stdout)
    expect(dry).toMatchObject({ dryRun: true, selected: 1, removed: 0, references: [expired] })
    const gc = JSON.parse((await run(['gc', store, '--expired', '--json'])).stdout)
    expect(gc).toMatchObject({ dryRun: false, selected: 1, removed: 1 })
    // Gone from the bucket, not merely refused.
    expect((await run(['ls', store, '--json', '--expired'])).stdout).toBe('')
    const bySession = JSON.parse((await run(['gc', store, '--session', 's1', '--json'])).stdout)
    expect(bySession).toMatchObject({ selected: 1, removed: 1, references: [logRef] })
    expect(jsonLines((await run(['ls', store, '--json'])).stdout).map((r) => r.reference)).toEqual([png])
  })

  test('a missing bucket, refused credentials and an unknown reference: exit 2, one line', { timeout: 120_000 }, async () => {
    expectOneLineError(await run(['ls', 's3://no-such-bucket-here/x/']), expect, /no such bucket|NoSuchBucket|not found/i)
    expectOneLineError(await run(['stats', `s3://${garage.bucket}/`], { AWS_SECRET_ACCESS_KEY: 'wrong-secret' }), expect, /credentials|signature|denied|forbidden/i)
    expectOneLineError(await run(['show', `s3://${garage.bucket}/`, `s3://${garage.bucket}/nope.txt`]), expect, /unknown reference/)
    expectOneLineError(await run(['grep', `s3://${garage.bucket}/`, `s3://${garage.bucket}/nope.txt`, 'x']), expect, /unknown reference/)
  })
})

describe('sessions on S3', () => {
  test('ls, show and rm on S3SnapshotStorage objects', { timeout: 120_000 }, async () => {
    const prefix = `sessions-${Date.now()}`
    const snapshots = new S3SnapshotStorage({
      bucket: garage.bucket,
      prefix,
      ...garage.connection,
    })
    const snapshot = (minute: number) => ({ scope: 'agent', schemaVersion: '1.0', createdAt: new Date(Date.UTC(2026, 10, 24, 9, minute)).toISOString(), data: {}, appData: {} })
    const location = (sessionId: string, scopeId = 'a1') => ({ sessionId, scope: 'agent' as const, scopeId })
    await snapshots.saveSnapshot({ location: location('one'), snapshotId: 'latest', isLatest: true, snapshot: snapshot(3) } as any)
    await snapshots.saveSnapshot({ location: location('one'), snapshotId: '0192c2a8-0000-7000-8000-000000000002', isLatest: false, snapshot: snapshot(3) } as any)
    await snapshots.saveSnapshot({ location: location('two', 'b2'), snapshotId: 'latest', isLatest: true, snapshot: snapshot(7) } as any)
    const source = `s3://${garage.bucket}/${prefix}`
    const ls = await run(['sessions', 'ls', source, '--json'])
    expect(ls.code, ls.stderr).toBe(0)
    expect(jsonLines(ls.stdout)).toEqual([
      { session: 'one', scopes: 1, snapshots: 2, latest: '2026-11-24T09:03:00.000Z' },
      { session: 'two', scopes: 1, snapshots: 1, latest: '2026-11-24T09:07:00.000Z' },
    ])
    expect(JSON.parse((await run(['sessions', 'show', source, 'two', '--json'])).stdout)).toEqual({
      session: 'two',
      scopes: [{ scope: 'agent', scopeId: 'b2', snapshots: 1, latest: '2026-11-24T09:07:00.000Z' }],
    })
    const rm = await run(['sessions', 'rm', source, 'one'])
    expect(rm.code, rm.stderr).toBe(0)
    expect(rm.stdout).toBe('removed session one (1 scope, 2 snapshots)\n')
    expect(await snapshots.loadSnapshot({ location: location('one') } as any)).toBeNull()
    expect(jsonLines((await run(['sessions', 'ls', source, '--json'])).stdout).map((r) => r.session)).toEqual(['two'])
    expectOneLineError(await run(['sessions', 'show', source, 'one']), expect, /no such session/)
  })
})

describe('on a terminal', () => {
  /** Runs the tool under `script` (a pseudo-terminal as stderr, stdout to a file); the terminal's text and stdout. */
  const underTerminal = (args: string[]) =>
    new Promise<{ terminal: string; stdout: string }>((resolve) => {
      const outDir = mkdtempSync(join(tmpdir(), 'co-cli-s3-tty-'))
      const outFile = join(outDir, 'out.txt')
      const assignments = Object.entries(env).map(([k, v]) => `${k}='${v}'`).join(' ')
      const command = `${assignments} '${process.execPath}' '${CLI}' ${args.map((a) => `'${a}'`).join(' ')} --path-style > '${outFile}'`
      const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] })
      let terminal = ''
      child.stdout.on('data', (d) => (terminal += d))
      child.on('close', () => {
        const stdout = readFileSync(outFile, 'utf8')
        rmSync(outDir, { recursive: true, force: true })
        resolve({ terminal, stdout })
      })
    })

  test('ls and gc draw the progress of listing a prefix: objects and pages, then metadata read; nothing off a terminal', { timeout: 300_000 }, async () => {
    const prefix = `cli-progress-${Date.now()}/`
    const s = storage(prefix)
    const count = 3_000
    await Promise.all(Array.from({ length: count }, (_, i) => s.store(`k${i}`, enc(`v${i}`), 'text/plain')))
    const store = `s3://${garage.bucket}/${prefix}`
    const ls = await underTerminal(['ls', store, '--json'])
    expect(ls.terminal).toMatch(/listing s3:\/\/\S+: \d+ objects, \d+ pages/)
    expect(ls.terminal).toMatch(new RegExp(`reading metadata .*\\| \\d+/${count}`))
    expect(jsonLines(ls.stdout)).toHaveLength(count)
    const gc = await underTerminal(['gc', store, '--max-bytes', '1G', '--dry-run'])
    expect(gc.terminal).toMatch(/listing s3:\/\/\S+: \d+ objects, \d+ pages/)
    expect(gc.stdout).toMatch(/^would remove 0 artifacts/)
    const piped = await run(['ls', store, '--json'])
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stderr).toBe('')
  })
})
