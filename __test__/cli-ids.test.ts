// The command-line tool as a new user meets it: opaque ids (`references: 'opaque'`) in
// `ls`, `show` and `grep`; `sessions ls` on the layout the README recommends (one
// FileStorage as the agent's storage, snapshots under `session/`); `gc --max-bytes`
// saying when it cannot reach its target, and refusing 0.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { Agent, SessionManager } from '@strands-agents/sdk'
import { ContextOffloader, FileStorage } from '../index.js'
import { cli, expectOneLineError, jsonLines } from './helpers/cli.js'
import { ScriptedModel, tempDirs, textTurn } from './helpers/harness.js'

const dir = tempDirs('co-cli-ids-')

const logText = (lines: number) =>
  Array.from({ length: lines }, (_, i) => (i % 50 === 7 ? `line ${i} ERROR disk full on /var` : `line ${i} INFO ok`)).join('\n')

/** A store with opaque ids in two sessions, and one artifact offloaded with path references. */
async function opaqueStore() {
  const artifactDir = dir()
  const storage = new FileStorage(artifactDir)
  const opaque = new ContextOffloader({ storage, references: 'opaque' })
  const paths = new ContextOffloader({ storage })
  const a = (await opaque.offload(logText(3_000), { key: 'logs', sessionId: 'alice' })).references[0]
  const b = (await opaque.offload(logText(2_000), { key: 'more', sessionId: 'bob' })).references[0]
  const plain = (await paths.offload(logText(2_500), { key: 'plain', sessionId: 'alice' })).references[0]
  return { artifactDir, a, b, plain }
}

describe('opaque ids', () => {
  test('ls shows each artifact\'s opaque id (- when it has none); --json has an "id" field', async () => {
    const { artifactDir, a, b, plain } = await opaqueStore()
    expect(a.reference).toMatch(/^ref_[A-Za-z0-9_-]{16}$/)
    const rows = jsonLines((await cli(['ls', artifactDir, '--json'])).stdout)
    const byRef = Object.fromEntries(rows.map((r) => [r.reference, r]))
    expect(byRef[a.storageReference].id).toBe(a.reference)
    expect(byRef[b.storageReference].id).toBe(b.reference)
    expect(byRef[plain.reference].id).toBeNull()
    expect(rows).toHaveLength(3)

    const table = (await cli(['ls', artifactDir])).stdout.trimEnd().split('\n')
    expect(table[0]).toMatch(/^REFERENCE\s+ID\s+TYPE/)
    expect(table.find((l) => l.startsWith(a.storageReference))).toMatch(new RegExp(`^\\S+\\s+${a.reference}\\s+text/plain\\s`))
    expect(table.find((l) => l.startsWith(plain.reference))).toMatch(/^\S+\s+-\s+text\/plain\s/)

    // --session narrows the listing and still finds the ids.
    const alice = jsonLines((await cli(['ls', artifactDir, '--json', '--session', 'alice'])).stdout)
    expect(alice.map((r) => r.id).sort()).toEqual([a.reference, null].sort())
  })

  test('show and grep take an opaque id with --session, and only in the session it was given in', async () => {
    const { artifactDir, a, b } = await opaqueStore()
    const byId = await cli(['show', artifactDir, a.reference, '--session', 'alice'])
    const byRef = await cli(['show', artifactDir, a.storageReference])
    expect(byId.code, byId.stderr).toBe(0)
    expect(byId.stdout).toBe(byRef.stdout)
    expect(byId.stdout).toBe(logText(3_000))

    const lines = await cli(['show', artifactDir, b.reference, '--session', 'bob', '--lines', '8:8'])
    expect(lines.stdout).toBe('line 7 ERROR disk full on /var\n')

    const grep = await cli(['grep', artifactDir, a.reference, 'ERROR', '--session', 'alice'])
    expect(grep.code, grep.stderr).toBe(0)
    expect(grep.stdout).toBe((await cli(['grep', artifactDir, a.storageReference, 'ERROR'])).stdout)
    expect(grep.stdout).toMatch(/^\[60 matches for \/ERROR\/\]/)

    // Another session's id, an id without --session, a made-up id: one-line errors.
    expectOneLineError(await cli(['show', artifactDir, a.reference, '--session', 'bob']), expect, new RegExp(`unknown id ${a.reference} in session bob`))
    expectOneLineError(await cli(['grep', artifactDir, b.reference, 'x', '--session', 'alice']), expect, /unknown id/)
    expectOneLineError(await cli(['show', artifactDir, a.reference]), expect, /is an opaque id: pass --session ID/)
    expectOneLineError(await cli(['show', artifactDir, 'ref_AAAAAAAAAAAAAAAA', '--session', 'alice']), expect, /unknown id ref_AAAAAAAAAAAAAAAA in session alice/)
  })

  test('--help of show and grep documents --session', async () => {
    for (const command of ['show', 'grep']) {
      const help = await cli([command, '--help'])
      expect(help.stdout).toContain('--session ID')
      expect(help.stdout).toContain('opaque id')
    }
  })
})

describe('sessions on the layout the README recommends', () => {
  test("one FileStorage as the agent's storage: sessions ls, show and rm find the snapshots under session/", async () => {
    const base = dir()
    for (const sessionId of ['user-1', 'user-2']) {
      const agent = new Agent({
        model: new ScriptedModel([() => textTurn('hello')]),
        storage: new FileStorage(base),
        sessionManager: new SessionManager({ sessionId }),
        plugins: [new ContextOffloader()],
        printer: false,
      })
      await agent.invoke('hi')
    }
    // The SDK's SessionManager wrote them under <dir>/session/<id>/ (its namespace).
    expect(existsSync(join(base, 'session', 'user-1', 'scopes'))).toBe(true)
    const ls = await cli(['sessions', 'ls', base, '--json'])
    expect(ls.code, ls.stderr).toBe(0)
    const rows = jsonLines(ls.stdout)
    expect(rows.map((r) => r.session)).toEqual(['user-1', 'user-2'])
    expect(rows[0].scopes).toBe(1)
    expect(rows[0].snapshots).toBeGreaterThanOrEqual(1)
    expect(rows[0].latest).toMatch(/^\d{4}-/)
    const show = JSON.parse((await cli(['sessions', 'show', base, 'user-1', '--json'])).stdout)
    expect(show.scopes).toEqual([expect.objectContaining({ scope: 'agent' })])
    const rm = await cli(['sessions', 'rm', base, 'user-1'])
    expect(rm.code, rm.stderr).toBe(0)
    expect(existsSync(join(base, 'session', 'user-1'))).toBe(false)
    expect(existsSync(join(base, 'session', 'user-2', 'scopes'))).toBe(true)
    expect(jsonLines((await cli(['sessions', 'ls', base, '--json'])).stdout).map((r) => r.session)).toEqual(['user-2'])
  })
})

describe('gc --max-bytes', () => {
  /** A store of fresh artifacts (younger than gc's grace), `count` of `bytes` each. */
  async function freshStore(count: number, bytes: number) {
    const artifactDir = dir()
    const storage = new FileStorage(artifactDir)
    for (let i = 0; i < count; i++) await storage.store(`k${i}`, new Uint8Array(bytes).fill(97), 'text/plain')
    return artifactDir
  }

  test('says when it cannot reach its target and why, also under --dry-run and in --json', async () => {
    const artifactDir = await freshStore(4, 64 * 1024)
    for (const extra of [[], ['--dry-run']]) {
      const run = await cli(['gc', artifactDir, '--max-bytes', '100K', ...extra])
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout.trimEnd().split('\n').pop()).toBe('cannot reach 100K: 256 KiB kept (256 KiB younger than 60 s)')
    }
    const json = JSON.parse((await cli(['gc', artifactDir, '--max-bytes', '100K', '--json'])).stdout)
    expect(json).toMatchObject({ selected: 0, removed: 0, maxBytes: 100 * 1024, keptBytes: 256 * 1024, reached: false })
    // A target it reaches says nothing of the kind.
    const reached = await cli(['gc', artifactDir, '--max-bytes', '1M'])
    expect(reached.stdout).not.toContain('cannot reach')
    expect(JSON.parse((await cli(['gc', artifactDir, '--max-bytes', '1M', '--json'])).stdout)).toMatchObject({ keptBytes: 256 * 1024, reached: true })
  })

  test('--max-bytes 0 is a bad size: exit 2, one line, nothing removed', async () => {
    const artifactDir = await freshStore(2, 1024)
    for (const zero of ['0', '0K', '0.4']) {
      expectOneLineError(await cli(['gc', artifactDir, '--max-bytes', zero]), expect, /--max-bytes: bad size/)
    }
    expect(jsonLines((await cli(['ls', artifactDir, '--json'])).stdout)).toHaveLength(2)
  })
})
