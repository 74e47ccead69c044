// The command-line tool on a directory store, run as a separate process as operators run
// it: every command, exit codes, the --json schemas, grep against the real retrieval tool
// of a real Agent, gc racing a writer process, and hostile input.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { Agent, tool } from '@strands-agents/sdk'
import { z } from 'zod'
import { ContextOffloader, FileSnapshotStorage, FileStorage } from '../index.js'
import { CLI, cli, expectOneLineError, jsonLines } from './helpers/cli.js'
import { ScriptedModel, prng, tempDirs, textTurn, toolCallTurn } from './helpers/harness.js'

const dir = tempDirs('co-cli-')

const HOUR = 3_600_000
const DAY = 24 * HOUR
const enc = (s: string) => new TextEncoder().encode(s)
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/**
 * A store with artifacts of every kind: expired (session s-old), three days old and
 * unexpired, live in sessions s1 and s2, JSON, binary and one without a session.
 */
async function populated() {
  const artifactDir = dir()
  const now = Date.now()
  // A storage sweeps what expired when it opens the directory, so the storages with the
  // real clock store first and the one whose clock is two hours behind stores last.
  const old = new ContextOffloader({ storage: new FileStorage({ artifactDir, clock: () => now - 3 * DAY }) })
  const liveStorage = new FileStorage({ artifactDir, ttlSeconds: 86_400 })
  const live = new ContextOffloader({ storage: liveStorage })
  const ref = async (p: Promise<any>) => (await p).references[0].reference as string
  const refs = {
    old: await ref(old.offload('o'.repeat(40_000), { key: 'old', sessionId: 's1' })),
    log: await ref(live.offload(logText(2_000), { key: 'log', sessionId: 's1' })),
    json: await ref(live.offload({ json: { users: Array.from({ length: 800 }, (_, i) => ({ id: i, role: i % 9 ? 'user' : 'admin' })) } }, { key: 'json', sessionId: 's2' })),
    plain: await liveStorage.store('plain', enc('no session here\n'.repeat(2_000)), 'text/plain'),
    png: await liveStorage.store('png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 1, 2]), 'image/png'),
    expired1: '',
    expired2: '',
  }
  const expired = new ContextOffloader({ storage: new FileStorage({ artifactDir, clock: () => now - 2 * HOUR, ttlSeconds: 3600 }) })
  refs.expired1 = await ref(expired.offload('x'.repeat(30_000), { key: 'exp1', sessionId: 's-old' }))
  refs.expired2 = await ref(expired.offload('y'.repeat(30_000), { key: 'exp2', sessionId: 's-old' }))
  return { artifactDir, refs, now }
}

function logText(lines: number) {
  return Array.from({ length: lines }, (_, i) =>
    i % 97 === 5 ? `2026-11-24T10:00:${String(i % 60).padStart(2, '0')}Z ERROR upstream timeout after ${i} ms` : `2026-11-24T10:00:${String(i % 60).padStart(2, '0')}Z INFO  request ${i} ok`,
  ).join('\n')
}

describe('ls, show, stats', () => {
  test('ls --json: one object per artifact with exactly the documented keys', async () => {
    const { artifactDir, refs } = await populated()
    const run = await cli(['ls', artifactDir, '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toBe('')
    const rows = jsonLines(run.stdout)
    // Expired artifacts are not listed by default.
    expect(rows.map((r) => r.reference).sort()).toEqual([refs.old, refs.log, refs.json, refs.plain, refs.png].sort())
    for (const r of rows) {
      expect(Object.keys(r)).toEqual(['reference', 'id', 'contentType', 'bytes', 'session', 'created', 'expires'])
      expect(typeof r.contentType).toBe('string')
      expect(Number.isSafeInteger(r.bytes)).toBe(true)
      expect(r.session === null || typeof r.session === 'string').toBe(true)
      expect(r.created).toMatch(ISO)
      expect(r.expires === null || ISO.test(r.expires)).toBe(true)
    }
    const byRef = Object.fromEntries(rows.map((r) => [r.reference, r]))
    expect(byRef[refs.old]).toMatchObject({ contentType: 'text/plain', bytes: 40_000, session: 's1', expires: null })
    expect(byRef[refs.json]).toMatchObject({ contentType: 'application/json', session: 's2' })
    expect(byRef[refs.png]).toMatchObject({ contentType: 'image/png', bytes: 12, session: null })
    expect(Date.parse(byRef[refs.log].expires) - Date.parse(byRef[refs.log].created)).toBe(86_400_000)
    // Oldest first.
    expect(rows[0].reference).toBe(refs.old)
    // The sizes are the files' sizes.
    for (const r of rows) expect(readFileSync(r.reference).length).toBe(r.bytes)

    // No command but gc removes anything, not even what expired: stats, show and grep
    // open the directory without its sweep.
    expect((await cli(['stats', artifactDir])).code).toBe(0)
    expect((await cli(['grep', artifactDir, refs.log, 'ERROR'])).code).toBe(0)
    const expired = jsonLines((await cli(['ls', artifactDir, '--json', '--expired'])).stdout)
    expect(expired.map((r) => r.reference).sort()).toEqual([refs.expired1, refs.expired2].sort())
    expect(expired.every((r) => Date.parse(r.expires) < Date.now())).toBe(true)
    const s1 = jsonLines((await cli(['ls', artifactDir, '--json', '--session', 's1'])).stdout)
    expect(s1.map((r) => r.reference).sort()).toEqual([refs.old, refs.log].sort())
    expect((await cli(['ls', artifactDir, '--json', '--session', 'nobody'])).stdout).toBe('')
  })

  test('ls as a table: a header and one row per artifact, no colour off a terminal', async () => {
    const { artifactDir, refs } = await populated()
    const run = await cli(['ls', artifactDir])
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^REFERENCE\s+ID\s+TYPE\s+SIZE\s+SESSION\s+CREATED\s+EXPIRES$/)
    expect(lines).toHaveLength(6)
    expect(run.stdout).not.toContain('\u001b[')
    const logRow = lines.find((l) => l.startsWith(refs.log))!
    expect(logRow).toMatch(/text\/plain\s+\S+ \S+\s+s1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\d{4}-/)
    // A session id that would drive the terminal is printed escaped (--json keeps it as is).
    const evil = '\u001b[2J\u001b]0;owned\u0007\u202e'
    await new ContextOffloader({ storage: new FileStorage(artifactDir) }).offload('e'.repeat(30_000), { key: 'evil', sessionId: evil })
    const escaped = await cli(['ls', artifactDir])
    expect(escaped.stdout).toContain('\\x1b[2J\\x1b]0;owned\\x07\\u202e')
    expect(escaped.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/)
    const json = jsonLines((await cli(['ls', artifactDir, '--json', '--session', evil])).stdout)
    expect(json.map((r) => r.session)).toEqual([evil])
  })

  test('show: the stored bytes, binary only off a terminal; --lines slices', async () => {
    const { artifactDir, refs } = await populated()
    const png = await cli(['show', artifactDir, refs.png])
    expect(png.code).toBe(0)
    expect([...png.stdoutBytes]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 1, 2])
    const log = await cli(['show', artifactDir, refs.log])
    expect(log.stdout).toBe(logText(2_000))
    const sliced = await cli(['show', artifactDir, refs.log, '--lines', '5:7'])
    expect(sliced.stdout).toBe(`${logText(2_000).split('\n').slice(4, 7).join('\n')}\n`)
    const tail = await cli(['show', artifactDir, refs.log, '--lines', '1999:'])
    expect(tail.stdout).toBe(`${logText(2_000).split('\n').slice(1998).join('\n')}\n`)
    // The bare file name is a reference too.
    const byName = await cli(['show', artifactDir, refs.log.split('/').pop()!])
    expect(byName.stdout).toBe(logText(2_000))
  })

  test('stats --json equals the storage API, overall and per session', async () => {
    const { artifactDir } = await populated()
    const run = await cli(['stats', artifactDir, '--json'])
    expect(run.code).toBe(0)
    const json = JSON.parse(run.stdout)
    expect(Object.keys(json)).toEqual(['artifacts', 'bytes', 'storedBytes', 'sessions'])
    // The two expired artifacts the tool leaves on disk (a storage opened by an agent
    // sweeps them first) count nowhere, not even in the bytes held.
    const api = await new FileStorage(artifactDir).stats()
    expect(json).toEqual(api)
    expect(json.artifacts).toBe(5)
    expect(Object.keys(json.sessions)).toEqual(['s1', 's2'])
    const table = await cli(['stats', artifactDir])
    expect(table.stdout).toMatch(/^SESSION\s+ARTIFACTS\s+SIZE\n\(all\)\s+5\s/)
    expect(table.stdout).toMatch(/\n\(no session\)\s+2\s/)
  })

  test('--help for every command; no arguments prints the overview and fails', async () => {
    for (const command of ['ls', 'show', 'grep', 'stats', 'gc', 'sessions']) {
      const run = await cli([command, '--help'])
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(new RegExp(`^Usage: context-offloader ${command} `))
    }
    const bare = await cli([])
    expect(bare.code).toBe(2)
    expect(bare.stdout).toContain('Commands:')
  })
})

describe('grep answers what the retrieval tool answers', () => {
  test('a real Agent greps an offloaded log; the CLI prints the same bytes, exit 0/1/2 as grep', { timeout: 120_000 }, async () => {
    const artifactDir = dir()
    const log = logText(60_000)
    const queries: any[] = [
      { pattern: 'ERROR.*timeout', context_lines: 2 },
      { pattern: 'request 4\\d{3} ok' },
      { pattern: 'timeout', line_range: { start: 1000, end: 5000 }, context_lines: 1 },
      { pattern: 'no such thing' },
      { line_range: { start: 10, end: 20 } },
    ]
    const answers: string[] = []
    let reference = ''
    const turns: any[] = [() => toolCallTurn('fetch_logs', 'tu-0', {})]
    queries.forEach((q, i) =>
      turns.push((messages: any[]) => {
        const last = messages[messages.length - 1].content.find((b: any) => b.type === 'toolResultBlock')
        const text = last.content.find((c: any) => c.type === 'textBlock').text as string
        if (i === 0) reference = /\n {2}(\S.*?) \(text, [\d,]+ chars\)/.exec(text)![1]!
        else answers.push(text)
        return toolCallTurn('retrieve_offloaded_content', `tu-${i + 1}`, { reference, ...q })
      }),
    )
    turns.push((messages: any[]) => {
      const last = messages[messages.length - 1].content.find((b: any) => b.type === 'toolResultBlock')
      answers.push(last.content.find((c: any) => c.type === 'textBlock').text)
      return textTurn('done')
    })
    const fetchLogs = tool({ name: 'fetch_logs', description: 'logs', inputSchema: z.object({}), callback: () => log })
    const plugin = new ContextOffloader({ storage: new FileStorage(artifactDir) })
    await new Agent({ model: new ScriptedModel(turns), tools: [fetchLogs], plugins: [plugin], printer: false }).invoke('go')
    expect(answers).toHaveLength(queries.length)
    expect(reference.startsWith(artifactDir)).toBe(true)

    for (const [i, q] of queries.entries()) {
      const args = ['grep', artifactDir, reference, q.pattern ?? '', '--max-chars', '10000']
      if (q.context_lines !== undefined) args.push('-C', String(q.context_lines))
      if (q.line_range) args.push('--lines', `${q.line_range.start}:${q.line_range.end}`)
      const run = await cli(args)
      expect(run.stdout, JSON.stringify(q)).toBe(`${answers[i]}\n`)
      expect(run.code).toBe(answers[i]!.startsWith('No matches found') ? 1 : 0)
      expect(run.stderr).toBe('')
    }
    // The tool's default budget cut the first answer; without --max-chars nothing is cut.
    expect(answers[0]).toContain('output truncated')
    const whole = await cli(['grep', artifactDir, reference, 'ERROR.*timeout', '-C', '2'])
    expect(whole.code).toBe(0)
    expect(whole.stdout).not.toContain('output truncated')
    const expected = log.split('\n').filter((l) => /ERROR.*timeout/.test(l)).length
    expect(whole.stdout.split('\n').filter((l) => l.startsWith('>'))).toHaveLength(expected)
    expect(whole.stdout.startsWith(`[${expected} matches for /ERROR.*timeout/]\n\n`)).toBe(true)
  })

  test('-F searches text with regex characters literally', async () => {
    const artifactDir = dir()
    const ref = await new FileStorage(artifactDir).store('k', enc('a(b\na.b\naxb\n'), 'text/plain')
    const literal = await cli(['grep', '-F', artifactDir, ref, 'a.b'])
    expect(literal.code).toBe(0)
    expect(literal.stdout).toMatch(/^\[1 match for /)
    const regex = await cli(['grep', artifactDir, ref, 'a.b'])
    expect(regex.stdout).toMatch(/^\[3 matches for /)
    const invalid = await cli(['grep', '-F', artifactDir, ref, 'a(b'])
    expect(invalid.stdout).toMatch(/^\[1 match for /)
  })
})

describe('gc', () => {
  test('--expired removes exactly the expired artifacts; --dry-run removes nothing', async () => {
    const { artifactDir, refs } = await populated()
    const before = readdirSync(artifactDir).sort()
    const dry = await cli(['gc', artifactDir, '--expired', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(readdirSync(artifactDir).sort()).toEqual(before)
    expect(dry.stdout).toContain(`would remove ${refs.expired1} (`)
    expect(dry.stdout.trimEnd().split('\n').pop()).toMatch(/^would remove 2 artifacts, /)
    const run = await cli(['gc', artifactDir, '--expired', '--json'])
    expect(run.code).toBe(0)
    const json = JSON.parse(run.stdout)
    expect(Object.keys(json)).toEqual(['dryRun', 'selected', 'removed', 'bytes', 'references'])
    expect(json).toMatchObject({ dryRun: false, selected: 2, removed: 2, bytes: 60_000 })
    expect(json.references.sort()).toEqual([refs.expired1, refs.expired2].sort())
    const left = jsonLines((await cli(['ls', artifactDir, '--json'])).stdout).map((r) => r.reference)
    expect(left).toHaveLength(5)
    expect((await cli(['ls', artifactDir, '--json', '--expired'])).stdout).toBe('')
    // The store itself agrees: nothing unexpired was touched.
    const storage = new FileStorage(artifactDir)
    for (const ref of left) await expect(storage.retrieve(ref)).resolves.toBeTruthy()
    expect((await cli(['gc', artifactDir, '--expired'])).stdout).toMatch(/^removed 0 artifacts/)
  })

  test('--session removes the session and its offload manifest; --older-than by age', async () => {
    const { artifactDir, refs } = await populated()
    // An opaque-reference plugin writes a manifest for the session.
    const storage = new FileStorage(artifactDir)
    const opaque = new ContextOffloader({ storage, references: 'opaque' })
    await opaque.offload('m'.repeat(30_000), { key: 'manifested', sessionId: 's2' })
    expect(await storage.list('offload-manifest/')).not.toHaveLength(0)
    const run = await cli(['gc', artifactDir, '--session', 's2'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`removed ${refs.json} (`)
    expect(run.stdout.trimEnd().split('\n').pop()).toMatch(/^removed 2 artifacts, /)
    expect(await storage.list('offload-manifest/')).toEqual([])
    expect((await storage.stats()).sessions.s2).toBeUndefined()

    const old = await cli(['gc', artifactDir, '--older-than', '2d', '--json'])
    // Only the 3-day-old artifact: the expired two are 2 h old.
    expect(JSON.parse(old.stdout)).toMatchObject({ selected: 1, removed: 1, references: [refs.old] })
    await expect(storage.retrieve(refs.old)).rejects.toThrow('Reference not found')
    await expect(storage.retrieve(refs.log)).resolves.toBeTruthy()
  })

  test('--max-bytes removes the expired, then the oldest, never what is younger than a minute', async () => {
    const { artifactDir, refs } = await populated()
    const json = JSON.parse((await cli(['gc', artifactDir, '--max-bytes', '1', '--json'])).stdout)
    // Everything but the fresh artifacts: the two expired and the 3-day-old one.
    expect(json.references.sort()).toEqual([refs.expired1, refs.expired2, refs.old].sort())
    const storage = new FileStorage(artifactDir)
    for (const ref of [refs.log, refs.json, refs.plain, refs.png]) await expect(storage.retrieve(ref)).resolves.toBeTruthy()
    const unchanged = JSON.parse((await cli(['gc', artifactDir, '--max-bytes', '1G', '--json'])).stdout)
    expect(unchanged).toMatchObject({ selected: 0, removed: 0 })
  })

  test('gc racing a writer process: nothing unexpired is lost, every expired artifact goes', { timeout: 180_000 }, async () => {
    const artifactDir = dir()
    const now = Date.now()
    const past = new FileStorage({ artifactDir, clock: () => now - 2 * HOUR, ttlSeconds: 3600 })
    const doomed: string[] = []
    for (let i = 0; i < 1_500; i++) doomed.push(await past.store(`old-${i}`, enc(`expired ${i}`), 'text/plain'))
    // The writer stores 1,500 unexpired artifacts (TTL 1 h, the real clock, so each is
    // younger than --max-bytes' grace when gc sees it) while gc runs again and again.
    const writer = spawn(process.execPath, [join(__dirname, 'fixtures', 'lifecycle-sweeper.mjs'), artifactDir, 'real', 'store', '1500', '3600', 'live-'])
    let printed = ''
    writer.stdout.on('data', (d) => (printed += d))
    const writerDone = new Promise<number | null>((resolve) => writer.on('exit', resolve))
    let writing = true
    void writerDone.then(() => (writing = false))
    let sweeps = 0
    let removed = 0
    while (writing || sweeps < 2) {
      const args = sweeps % 2 === 0 ? ['gc', artifactDir, '--expired', '--json'] : ['gc', artifactDir, '--max-bytes', '1', '--json']
      const run = await cli(args)
      expect(run.code, run.stderr).toBe(0)
      removed += JSON.parse(run.stdout).removed
      sweeps++
    }
    expect(await writerDone).toBe(0)
    expect(sweeps).toBeGreaterThan(2)
    expect(removed).toBe(1_500)
    const live = printed.trim().split('\n')
    expect(live).toHaveLength(1_500)
    const storage = new FileStorage(artifactDir)
    for (const [i, ref] of live.entries()) expect(new TextDecoder().decode((await storage.retrieve(ref)).content)).toBe(`live- ${i}`)
    // The expired ones are gone from the directory itself, not merely refused.
    const files = new Set(readdirSync(artifactDir))
    expect(doomed.filter((ref) => files.has(ref.split('/').pop()!))).toEqual([])
    expect((await storage.stats()).artifacts).toBe(1_500)
  })
})

describe('sessions', () => {
  const snapshot = (n: number) => ({ scope: 'agent', schemaVersion: '1.0', createdAt: new Date(Date.UTC(2026, 10, 24, 10, n)).toISOString(), data: { n }, appData: {} })
  const loc = (sessionId: string, scopeId = 'agent-1', scope: 'agent' | 'multiAgent' = 'agent') => ({ sessionId, scope, scopeId })

  test('ls, show and rm on a snapshot directory', async () => {
    const base = dir()
    const storage = new FileSnapshotStorage(base)
    await storage.saveSnapshot({ location: loc('alpha'), snapshotId: 'latest', isLatest: true, snapshot: snapshot(1) })
    await storage.saveSnapshot({ location: loc('alpha'), snapshotId: '0192c2a8-0000-7000-8000-000000000001', isLatest: false, snapshot: snapshot(1) })
    await storage.saveSnapshot({ location: loc('alpha', 'orch', 'multiAgent'), snapshotId: 'latest', isLatest: true, snapshot: snapshot(5) })
    await storage.saveSnapshot({ location: loc('beta'), snapshotId: 'latest', isLatest: true, snapshot: snapshot(2) })
    const ls = await cli(['sessions', 'ls', base, '--json'])
    expect(ls.code, ls.stderr).toBe(0)
    expect(jsonLines(ls.stdout)).toEqual([
      { session: 'alpha', scopes: 2, snapshots: 3, latest: '2026-11-24T10:05:00.000Z' },
      { session: 'beta', scopes: 1, snapshots: 1, latest: '2026-11-24T10:02:00.000Z' },
    ])
    const show = await cli(['sessions', 'show', base, 'alpha', '--json'])
    const shown = JSON.parse(show.stdout)
    expect(shown.session).toBe('alpha')
    expect(shown.scopes.sort((a: any, b: any) => a.scope.localeCompare(b.scope))).toEqual([
      { scope: 'agent', scopeId: 'agent-1', snapshots: 2, latest: '2026-11-24T10:01:00.000Z' },
      { scope: 'multiAgent', scopeId: 'orch', snapshots: 1, latest: '2026-11-24T10:05:00.000Z' },
    ])
    const table = await cli(['sessions', 'ls', base])
    expect(table.stdout).toMatch(/^SESSION\s+SCOPES\s+SNAPSHOTS\s+LATEST\nalpha\s+2\s+3\s+2026-11-24 10:05:00Z\n/)
    const dry = await cli(['sessions', 'rm', base, 'alpha', '--dry-run'])
    expect(dry.stdout).toBe('would remove session alpha (2 scopes, 3 snapshots)\n')
    expect(await storage.loadSnapshot({ location: loc('alpha') })).not.toBeNull()
    const rm = await cli(['sessions', 'rm', base, 'alpha'])
    expect(rm.code).toBe(0)
    expect(await storage.loadSnapshot({ location: loc('alpha') })).toBeNull()
    expect(jsonLines((await cli(['sessions', 'ls', base, '--json'])).stdout).map((r) => r.session)).toEqual(['beta'])
    expectOneLineError(await cli(['sessions', 'show', base, 'alpha']), expect, /no such session: alpha/)
    expectOneLineError(await cli(['sessions', 'rm', base, '../beta']), expect, /bad session id/)
    expectOneLineError(await cli(['sessions', 'frobnicate', base]), expect, /unknown action/)
  })
})

describe('bad input: exit 2 and exactly one line on stderr, never a stack trace', () => {
  test('missing stores, unknown references, bad patterns, durations, sizes and options', async () => {
    const { artifactDir, refs } = await populated()
    const file = join(artifactDir, 'not-a-dir')
    writeFileSync(file, 'x')
    const cases: Array<[string[], RegExp]> = [
      [['ls', join(artifactDir, 'missing')], /no such directory/],
      [['ls', file], /not a directory/],
      [['stats', '/definitely/not/here'], /no such directory/],
      [['show', artifactDir, 'nope.txt'], /unknown reference: nope\.txt/],
      [['show', artifactDir, '../../etc/passwd'], /unknown reference/],
      [['show', artifactDir, 'C:\\Windows\\win.ini'], /unknown reference/],
      [['show', artifactDir, refs.expired1], /: gone \(expired\)$/m],
      [['grep', artifactDir, refs.expired2, 'x'], /: gone \(expired\)$/m],
      [['grep', artifactDir, 'nope.txt', 'x'], /unknown reference/],
      [['grep', artifactDir, refs.log, '(unclosed'], /bad pattern: Invalid regular expression/],
      [['grep', artifactDir, refs.log, 'x', '-C', 'lots'], /--context/],
      [['grep', artifactDir, refs.log, 'x', '--lines', '9:3'], /bad line range/],
      [['grep', artifactDir, refs.log, 'x', '--lines', '999999:1000000'], /beyond content length/],
      [['grep', artifactDir, refs.png, 'x'], /binary/],
      [['show', artifactDir, refs.png, '--lines', '1:2'], /binary/],
      [['gc', artifactDir], /exactly one of/],
      [['gc', artifactDir, '--expired', '--session', 'x'], /exactly one of/],
      [['gc', artifactDir, '--older-than', '7 days'], /bad duration/],
      [['gc', artifactDir, '--older-than', '-1d'], /--older-than' argument is ambiguous/],
      [['gc', artifactDir, '--older-than', '0s'], /bad duration/],
      [['gc', artifactDir, '--max-bytes', '1Q'], /bad size/],
      [['gc', artifactDir, '--max-bytes', '1e999'], /bad size/],
      [['ls', artifactDir, '--bogus'], /Unknown option '--bogus'/],
      [['ls'], /expected STORE/],
      [['ls', artifactDir, 'extra'], /expected STORE/],
      [['frobnicate'], /unknown command/],
      // What was typed is echoed escaped: a control sequence never reaches the terminal.
      [['\u001b[2J\u0007bad\u009b'], /unknown command '\\x1b\[2J\\x07bad\\x9b'/],
      [['ls', 's3://'], /bad bucket name/],
      [['ls', 's3://UPPER_case/x'], /bad bucket name/],
      [['ls', 's3://ok-bucket', '--endpoint', 'not a url'], /--endpoint/],
    ]
    for (const [args, message] of cases) {
      const run = await cli(args)
      expectOneLineError(run, expect, message)
      expect(run.stderr.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    }
    // Reading an expired artifact refused it and left it in place, for gc to remove.
    const stillThere = jsonLines((await cli(['ls', artifactDir, '--json', '--expired'])).stdout)
    expect(stillThere.map((r) => r.reference).sort()).toEqual([refs.expired1, refs.expired2].sort())
  })

  test('seeded fuzz: generated hostile arguments never crash, hang or print a stack', { timeout: 120_000 }, async () => {
    const { artifactDir, refs } = await populated()
    const everything = async () => [(await cli(['ls', artifactDir, '--json'])).stdout, (await cli(['ls', artifactDir, '--json', '--expired'])).stdout]
    const before = await everything()
    const rand = prng(1207).next
    const hostile = ['', '-', '--', '\u0001\u001b[2J', '..', '../..', '/etc/passwd', '\\\\?\\C:\\x', 'C:', '%2e%2e', '\u202e', 'a'.repeat(5_000), '[', '(?<', '*', '\\', 's3://a', 's3://bucket/../..', '--json', '-C', '1:', ':5', '0:0', 'NaN', '1e309']
    const commands = ['ls', 'show', 'grep', 'stats', 'gc', 'sessions']
    const runs = Array.from({ length: 60 }, () => {
      const args = [commands[Math.floor(rand() * commands.length)]!]
      const n = Math.floor(rand() * 5)
      for (let i = 0; i < n; i++) {
        const pick = rand()
        args.push(pick < 0.3 ? artifactDir : pick < 0.4 ? refs.log : hostile[Math.floor(rand() * hostile.length)]!)
      }
      return args
    })
    for (const args of runs) {
      const run = await cli(args)
      expect([0, 1, 2], JSON.stringify(args)).toContain(run.code)
      if (run.code === 2) expectOneLineError(run, expect)
      expect(run.stderr).not.toContain('panicked')
      // Control characters from the arguments are escaped, never sent to the terminal.
      expect(run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/)
    }
    // Whatever ran, nothing was removed, expired or not: no generated gc had a selector.
    expect(await everything()).toEqual(before)
    expect(before[1]).not.toBe('')
  })
})

describe('on a terminal', () => {
  test('a progress bar on stderr for a long sweep, in colour unless NO_COLOR; none off a terminal', { timeout: 120_000 }, async () => {
    const now = Date.now()
    const expiredStore = async () => {
      const artifactDir = dir()
      const past = new FileStorage({ artifactDir, clock: () => now - 2 * HOUR, ttlSeconds: 3600 })
      for (let i = 0; i < 3_000; i++) await past.store(`old-${i}`, enc(`expired ${i}`), 'text/plain')
      return artifactDir
    }
    // `script` runs the tool on a pseudo-terminal: stderr is that terminal, stdout a file.
    const underTerminal = (env: string, artifactDir: string) =>
      new Promise<{ terminal: string; stdout: string }>((resolve) => {
        const outFile = join(dir(), 'out.txt')
        const command = `${env} '${process.execPath}' '${CLI}' gc '${artifactDir}' --expired > '${outFile}'`
        const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] })
        let terminal = ''
        child.stdout.on('data', (d) => (terminal += d))
        child.on('close', () => resolve({ terminal, stdout: readFileSync(outFile, 'utf8') }))
      })
    const coloured = await underTerminal('', await expiredStore())
    expect(coloured.terminal).toMatch(/removing .*\| 0\/3000/)
    expect(coloured.terminal).toContain('\u001b[36m')
    expect(coloured.stdout.trimEnd().split('\n').pop()).toMatch(/^removed 3000 artifacts/)
    const plain = await underTerminal('NO_COLOR=1', await expiredStore())
    expect(plain.terminal).toMatch(/removing /)
    expect(plain.terminal).not.toMatch(/\u001b\[3\dm/)
    const piped = await cli(['gc', await expiredStore(), '--expired'])
    expect(piped.stderr).toBe('')
    expect(piped.stdout.trimEnd().split('\n').pop()).toMatch(/^removed 3000 artifacts/)
  })
})
