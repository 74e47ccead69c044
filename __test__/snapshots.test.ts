// FileSnapshotStorage: the native session SnapshotStorage, checked against the SDK's
// session FileStorage (same files, same results, same errors), with real SessionManagers
// and Agents in both directions and across processes, and under SIGKILL.
import { afterAll, describe, expect, test } from 'vitest'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, FileStorage as SdkSnapshotStorage, SessionManager } from '@strands-agents/sdk'
import { v7 as uuidV7 } from 'uuid'
import { FileSnapshotStorage } from '../index.js'
import { ScriptedModel, prng, tempDir, textTurn } from './helpers/harness.js'

const SESSION_AGENT = fileURLToPath(new URL('./fixtures/session-agent.mjs', import.meta.url))
const CRASH_WRITER = fileURLToPath(new URL('./fixtures/snapshot-crash-writer.mjs', import.meta.url))
const work = tempDir('co-snap-')
afterAll(() => work.cleanup())

let dirCount = 0
function freshDir(label: string): string {
  const dir = join(work.path, `${label}-${++dirCount}`)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** Every file under `root` as relative path -> content. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else out[relative(root, path)] = readFileSync(path, 'utf8')
    }
  }
  walk(root)
  return out
}

/** The outcome of a call: its value, or the error's class name and message. */
async function outcome(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await fn() }
  } catch (e: any) {
    return { error: e?.name, message: e?.message }
  }
}

const loc = (sessionId: string, scopeId = 'default', scope = 'agent') => ({ sessionId, scope, scopeId }) as any

function snapshotOf(i: number) {
  return {
    scope: 'agent',
    schemaVersion: '1.0',
    createdAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
    data: { messages: [{ role: 'user', content: [{ text: `m${i} ✓ \u{1F600}` }] }], state: { n: i } },
    appData: {},
  }
}

describe('differential against the SDK session FileStorage', () => {
  test('same files on disk and same results for saves, loads, paging and deletes', async () => {
    const sdkDir = freshDir('diff-sdk')
    const ourDir = freshDir('diff-ours')
    const sdk = new SdkSnapshotStorage(sdkDir)
    const ours = new FileSnapshotStorage(ourDir)
    const ids = Array.from({ length: 25 }, () => uuidV7())
    const r = prng(7)
    const shuffled = ids.map((id) => [r.next(), id] as const).sort((a, b) => a[0] - b[0]).map(([, id]) => id)
    const ops: Array<(s: any) => Promise<unknown>> = [
      (s) => s.loadSnapshot({ location: loc('s1') }),
      (s) => s.listSnapshotIds({ location: loc('s1') }),
      (s) => s.saveSnapshot({ location: loc('s1'), snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(0) }),
      ...shuffled.map((id, i) => (s: any) =>
        s.saveSnapshot({ location: loc('s1'), snapshotId: id, isLatest: false, snapshot: snapshotOf(i + 1) }),
      ),
      (s) => s.saveSnapshot({ location: loc('s1'), snapshotId: 'latest', isLatest: true, snapshot: snapshotOf(99) }),
      (s) => s.saveSnapshot({ location: loc('s1', 'orch', 'multiAgent'), snapshotId: 'x', isLatest: true, snapshot: { a: 1 } }),
      (s) => s.saveSnapshot({ location: loc('s2'), snapshotId: 'named_snapshot', isLatest: false, snapshot: [1, 'two'] }),
      (s) => s.saveManifest({ location: loc('s1'), manifest: { schemaVersion: '1.0', updatedAt: '2026-01-01T00:00:00.000Z' } }),
      (s) => s.loadManifest({ location: loc('s1') }),
      (s) => s.loadSnapshot({ location: loc('s1') }),
      (s) => s.loadSnapshot({ location: loc('s1'), snapshotId: ids[3] }),
      (s) => s.loadSnapshot({ location: loc('s1'), snapshotId: uuidV7() }),
      (s) => s.loadSnapshot({ location: loc('s1', 'orch', 'multiAgent') }),
      (s) => s.loadSnapshot({ location: loc('s2'), snapshotId: 'named_snapshot' }),
      (s) => s.listSnapshotIds({ location: loc('s1') }),
      (s) => s.listSnapshotIds({ location: loc('s2') }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 0 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: -3 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 2.7 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 0.5 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: Number.NaN }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: Infinity }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 1e12 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: ids[10] }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: ids[10]!.toUpperCase(), limit: 3 }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: ids[24] }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: '' }),
      (s) => s.listSnapshotIds({ location: loc('s1'), startAfter: 'not-a-uuid' }),
      (s) => s.listSnapshotIds({ location: loc('s1'), limit: 0, startAfter: 'not-a-uuid' }),
      (s) => s.deleteSession({ sessionId: 'nobody' }),
    ]
    for (const [i, op] of ops.entries()) {
      const [a, b] = [await outcome(() => op(sdk)), await outcome(() => op(ours))]
      expect(b, `operation ${i}`).toEqual(a)
    }
    expect(tree(ourDir)).toEqual(tree(sdkDir))

    // Paging with startAfter walks every id exactly once, in UUID v7 order.
    for (const storage of [sdk, ours]) {
      const seen: string[] = []
      let page: string[] = await storage.listSnapshotIds({ location: loc('s1'), limit: 4 })
      while (page.length > 0) {
        seen.push(...page)
        page = await storage.listSnapshotIds({ location: loc('s1'), limit: 4, startAfter: page.at(-1) })
      }
      expect(seen).toEqual([...ids].sort())
    }

    // Files written by one storage are read by the other.
    const crossed = [
      [sdk, ours, ourDir],
      [ours, sdk, sdkDir],
    ] as const
    for (const [reader, , ] of crossed) {
      expect(await reader.loadSnapshot({ location: loc('s1') })).toEqual(snapshotOf(99))
    }
    expect(await new FileSnapshotStorage(sdkDir).listSnapshotIds({ location: loc('s1') })).toEqual([...ids].sort())
    expect(await new SdkSnapshotStorage(ourDir).loadSnapshot({ location: loc('s1'), snapshotId: ids[7] })).toEqual(
      await ours.loadSnapshot({ location: loc('s1'), snapshotId: ids[7] }),
    )

    // Deleting a session removes every file of it, and nothing else.
    await Promise.all([sdk.deleteSession({ sessionId: 's1' }), ours.deleteSession({ sessionId: 's1' })])
    expect(tree(ourDir)).toEqual(tree(sdkDir))
    expect(Object.keys(tree(ourDir))).toEqual(['s2/scopes/agent/default/snapshots/immutable_history/snapshot_named_snapshot.json'])
    expect(await ours.loadSnapshot({ location: loc('s1') })).toBeNull()
    expect(await ours.listSnapshotIds({ location: loc('s1') })).toEqual([])
  })

  test('the default manifest, and corrupt or unreadable files, are reported as the SDK reports them', async () => {
    const sdkDir = freshDir('errs-sdk')
    const ourDir = freshDir('errs-ours')
    for (const dir of [sdkDir, ourDir]) {
      const snapDir = join(dir, 's', 'scopes', 'agent', 'default', 'snapshots')
      mkdirSync(join(snapDir, 'immutable_history'), { recursive: true })
      writeFileSync(join(snapDir, 'snapshot_latest.json'), '{"torn": ')
      mkdirSync(join(snapDir, 'manifest.json'))
      writeFileSync(join(snapDir, 'immutable_history', 'snapshot_zz.json.tmp'), '{}')
      writeFileSync(join(snapDir, 'immutable_history', 'notes.txt'), '{}')
    }
    const pairs = [new SdkSnapshotStorage(sdkDir), new FileSnapshotStorage(ourDir)] as const
    const ops: Array<(s: any, dir: string) => Promise<unknown>> = [
      (s) => s.loadSnapshot({ location: loc('s') }),
      (s) => s.loadManifest({ location: loc('s') }),
      (s) => s.saveManifest({ location: loc('s'), manifest: { schemaVersion: '1.0', updatedAt: 'x' } }),
      (s) => s.listSnapshotIds({ location: loc('s') }),
    ]
    for (const op of ops) {
      const [a, b] = await Promise.all(pairs.map((s) => outcome(() => op(s, ''))))
      const normalize = (o: any) => (o.message ? { ...o, message: o.message.replace(ourDir, '<dir>').replace(sdkDir, '<dir>') } : o)
      expect(normalize(b)).toEqual(normalize(a))
    }
    const manifest = await pairs[1].loadManifest({ location: loc('fresh') })
    expect(Object.keys(manifest)).toEqual(['schemaVersion', 'updatedAt'])
    expect(manifest.schemaVersion).toBe('1.0')
    expect(Math.abs(Date.parse(manifest.updatedAt) - Date.now())).toBeLessThan(60_000)
  })
})

describe('options', () => {
  test('durable storage round-trips, and a missing baseDir is a TypeError', async () => {
    const dir = freshDir('durable')
    const storage = new FileSnapshotStorage({ baseDir: dir, durable: true })
    expect(storage.baseDir).toBe(dir)
    expect(storage.snapshot).toBe(storage)
    const id = uuidV7()
    await storage.saveSnapshot({ location: loc('d'), snapshotId: id, isLatest: false, snapshot: { v: 2 } as any })
    await storage.saveManifest({ location: loc('d'), manifest: { schemaVersion: '1.0', updatedAt: 'now' } })
    expect(await new SdkSnapshotStorage(dir).loadSnapshot({ location: loc('d'), snapshotId: id })).toEqual({ v: 2 })
    expect(await storage.listSnapshotIds({ location: loc('d') })).toEqual([id])
    expect(() => new (FileSnapshotStorage as any)()).toThrow(TypeError)
    expect(() => new FileSnapshotStorage({ baseDir: '' })).toThrow(TypeError)
  })
})

describe('concurrent saves', () => {
  test('concurrent saves of one file all resolve, leave no temporary file, and the last call wins', async () => {
    const dir = freshDir('concurrent')
    const ours = new FileSnapshotStorage(dir)
    for (let round = 0; round < 5; round++) {
      const saves = Array.from({ length: 30 }, (_, i) =>
        ours.saveSnapshot({
          location: loc('c'),
          snapshotId: 'latest',
          isLatest: true,
          // Sizes vary a lot so that later calls often finish first.
          snapshot: { round, i, filler: 'x'.repeat(i % 2 ? 10 : 400_000) } as any,
        }),
      )
      await Promise.all(saves)
      const latest: any = await ours.loadSnapshot({ location: loc('c') })
      expect([latest.round, latest.i]).toEqual([round, 29])
    }
    expect(Object.keys(tree(dir))).toEqual(['c/scopes/agent/default/snapshots/snapshot_latest.json'])
  })
})

describe('validation', () => {
  const bad = ['', 'UPPER', '../escape', 'a/b', '.', '..', 'with space', 'dot.dot', 'é', 'nul\0', '/abs']
  test('bad session ids, scope ids, scopes and snapshot ids are rejected with the SDK messages', async () => {
    const dir = freshDir('validation')
    const sdk = new SdkSnapshotStorage(dir)
    const ours = new FileSnapshotStorage(dir)
    const cases: Array<(s: any) => Promise<unknown>> = []
    for (const id of bad) {
      cases.push(
        (s) => s.saveSnapshot({ location: loc(id), snapshotId: 'latest', isLatest: true, snapshot: {} }),
        (s) => s.saveSnapshot({ location: loc('ok', id), snapshotId: 'latest', isLatest: true, snapshot: {} }),
        (s) => s.saveSnapshot({ location: loc(id, id), snapshotId: id, isLatest: false, snapshot: {} }),
        (s) => s.loadSnapshot({ location: loc('ok'), snapshotId: id }),
        (s) => s.loadSnapshot({ location: loc(id) }),
        (s) => s.listSnapshotIds({ location: loc('ok', id) }),
        (s) => s.listSnapshotIds({ location: loc('ok'), startAfter: id }),
        (s) => s.deleteSession({ sessionId: id }),
        (s) => s.loadManifest({ location: loc(id) }),
        (s) => s.saveManifest({ location: loc('ok', id), manifest: {} }),
      )
    }
    for (const scope of ['Agent', 'multiagent', '../agent', '']) {
      cases.push(
        (s) => s.saveSnapshot({ location: loc('ok', 'ok', scope), snapshotId: 'latest', isLatest: true, snapshot: {} }),
        (s) => s.loadSnapshot({ location: loc('ok', 'ok', scope) }),
        (s) => s.listSnapshotIds({ location: loc('ok', 'ok', scope) }),
      )
    }
    let failures = 0
    for (const [i, c] of cases.entries()) {
      const [a, b] = [await outcome(() => c(sdk)), await outcome(() => c(ours))]
      expect(b, `case ${i}`).toEqual(a)
      if ((b as any).error) failures++
    }
    // Every case fails except `startAfter: ''`, which the SDK treats as no cursor.
    expect(failures).toBe(cases.length - 1)
    // Nothing was written anywhere: no path escaped, nothing was created.
    expect(tree(dir)).toEqual({})
    expect(readdirSync(work.path).some((n) => n === 'escape' || n === 'abs')).toBe(false)
  })
})

/** An agent whose offline model answers each prompt with `reply <n>`. */
function agentWith(snapshot: any, sessionId: string, turns = 4) {
  const model = new ScriptedModel(Array.from({ length: turns }, (_, i) => () => textTurn(`reply ${i}`)))
  const sessionManager = new SessionManager({
    sessionId,
    storage: { snapshot },
    snapshotTrigger: ({ agentData }) => agentData.messages.length % 4 === 0,
  } as any)
  return new Agent({ model, sessionManager, printer: false } as any)
}

describe('interop with a real SessionManager and Agent', () => {
  for (const [writer, reader] of [
    ['sdk', 'ours'],
    ['ours', 'sdk'],
  ] as const) {
    test(`a session saved through ${writer} resumes through ${reader}`, async () => {
      const dir = freshDir(`interop-${writer}`)
      const make = (side: string) => (side === 'sdk' ? new SdkSnapshotStorage(dir) : new FileSnapshotStorage(dir))
      const first = agentWith(make(writer), 'chat-1')
      await first.invoke('hello')
      await first.invoke('again')
      const saved = JSON.parse(JSON.stringify(first.messages))
      expect(saved).toHaveLength(4)

      const second = agentWith(make(reader), 'chat-1')
      await second.invoke('third')
      expect(JSON.parse(JSON.stringify(second.messages)).slice(0, 4)).toEqual(saved)
      expect(second.messages).toHaveLength(6)

      // Immutable history (from the snapshot trigger) is listed the same by both storages.
      const sm = (second as any).sessionManager as SessionManager
      const listed = await sm.listSnapshotIds({ target: second } as any)
      expect(listed).toHaveLength(1)
      for (const side of ['sdk', 'ours']) {
        expect(await make(side).listSnapshotIds({ location: loc('chat-1', 'agent') })).toEqual(listed)
      }

      // And the other storage sees the resumed session's latest snapshot.
      const third = agentWith(make(writer), 'chat-1')
      await third.invoke('fourth')
      expect(third.messages).toHaveLength(8)

      // deleteSession through the SessionManager removes it for both.
      await sm.deleteSession()
      for (const side of ['sdk', 'ours']) {
        expect(await make(side).loadSnapshot({ location: loc('chat-1', 'agent') })).toBeNull()
      }
    })
  }

  test('the storage can also be passed directly as SessionManagerConfig.storage', async () => {
    const dir = freshDir('direct')
    const storage = new FileSnapshotStorage(dir)
    const model = new ScriptedModel([() => textTurn('hi there')])
    const sessionManager = new SessionManager({ sessionId: 'direct', storage } as any)
    const agent = new Agent({ model, sessionManager, printer: false } as any)
    await agent.invoke('hello')
    const sdkView = await new SdkSnapshotStorage(dir).loadSnapshot({ location: loc('direct', 'agent') })
    expect((sdkView as any).data.messages).toHaveLength(2)
  })

  test('a relative base directory works for immutable snapshots too (the SDK rejects them there)', async () => {
    const rel = relative(process.cwd(), freshDir('relative'))
    const dotted = `./${rel}`
    const id = uuidV7()
    const save = (s: any) => s.saveSnapshot({ location: loc('r'), snapshotId: id, isLatest: false, snapshot: { v: 1 } })
    expect(await outcome(() => save(new SdkSnapshotStorage(dotted)))).toMatchObject({ error: 'SessionError' })
    await save(new FileSnapshotStorage(dotted))
    // Same file the SDK reads with the equivalent normalized path.
    expect(await new SdkSnapshotStorage(rel).loadSnapshot({ location: loc('r'), snapshotId: id })).toEqual({ v: 1 })
  })

  /** Runs the session-agent fixture: one turn in a fresh process; returns the agent's messages. */
  function agentProcess(dir: string, impl: string, prompt: string): Promise<any[]> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [SESSION_AGENT, dir, impl, 'proc-session', prompt], { stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      let err = ''
      child.stdout.on('data', (c) => (out += c))
      child.stderr.on('data', (c) => (err += c))
      child.on('error', reject)
      child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}: ${err}`))))
    })
  }

  test('a session saved by one process is resumed by another (ours -> ours -> SDK -> ours)', async () => {
    const dir = freshDir('processes')
    const a = await agentProcess(dir, 'ours', 'one')
    expect(a.map((m) => m.content[0].text)).toEqual(['one', 'reply 1'])
    const b = await agentProcess(dir, 'ours', 'two')
    expect(b.map((m) => m.content[0].text)).toEqual(['one', 'reply 1', 'two', 'reply 3'])
    const c = await agentProcess(dir, 'sdk', 'three')
    expect(c).toHaveLength(6)
    const d = await agentProcess(dir, 'ours', 'four')
    expect(d.map((m) => m.content[0].text)).toEqual(['one', 'reply 1', 'two', 'reply 3', 'three', 'reply 5', 'four', 'reply 7'])
  })
})

describe('crash safety', () => {
  function runWriter(dir: string, seed: number, delayMs: number) {
    return new Promise<{ acknowledged: number; killed: boolean }>((resolve, reject) => {
      const child = spawn(process.execPath, [CRASH_WRITER, dir, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      let err = ''
      let timer: NodeJS.Timeout | undefined
      child.stdout.setEncoding('utf8')
      child.stdout.on('data', (chunk: string) => {
        out += chunk
        if (!timer && out.includes('ready\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs)
      })
      child.stderr.on('data', (c) => (err += c))
      child.on('error', reject)
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer)
        if (signal !== 'SIGKILL' && code !== 0) return reject(new Error(`writer failed (${code}): ${err}`))
        const numbers = out.split('\n').slice(0, -1).filter((l) => /^\d+$/.test(l)).map(Number)
        resolve({ acknowledged: numbers.length ? Math.max(...numbers) : 0, killed: signal === 'SIGKILL' })
      })
    })
  }

  test('temporary files of crashed writers are removed once they are an hour old', async () => {
    const dir = freshDir('stale')
    const snapDir = join(dir, 's', 'scopes', 'agent', 'default', 'snapshots')
    mkdirSync(snapDir, { recursive: true })
    const stale = join(snapDir, '.snapshot_latest.json.999-1.tmp')
    const recent = join(snapDir, '.snapshot_latest.json.999-2.tmp')
    writeFileSync(stale, '{"torn": ')
    writeFileSync(recent, '{"in flight": ')
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000)
    utimesSync(stale, twoHoursAgo, twoHoursAgo)
    await new FileSnapshotStorage(dir).saveSnapshot({ location: loc('s'), snapshotId: 'latest', isLatest: true, snapshot: { ok: 1 } as any })
    expect(readdirSync(snapDir).sort()).toEqual(['.snapshot_latest.json.999-2.tmp', 'snapshot_latest.json'])
  })

  test('after SIGKILL at random moments during 1,000 saves, the latest snapshot always loads whole', { timeout: 240_000 }, async () => {
    const r = prng(20261122)
    let kills = 0
    for (let run = 0; run < 8; run++) {
      const dir = freshDir('crash')
      const { acknowledged, killed } = await runWriter(dir, r.int(1, 1e9), r.int(50, 1500))
      if (killed) kills++
      for (const storage of [new FileSnapshotStorage(dir), new SdkSnapshotStorage(dir)]) {
        const latest: any = await storage.loadSnapshot({ location: loc('crash') })
        if (acknowledged === 0 && latest === null) continue
        expect(latest, `run ${run}`).not.toBeNull()
        // The snapshot on disk is the last acknowledged one or the one in flight, and whole.
        expect(latest.data.n === acknowledged || latest.data.n === acknowledged + 1, `run ${run}: n=${latest.data.n} ack=${acknowledged}`).toBe(true)
        expect(latest.data.filler.length).toBe(latest.data.size)
        expect(latest.data.filler).toBe(String.fromCharCode(97 + (latest.data.n % 26)).repeat(latest.data.size))
      }
      // Leftover temporaries (if any) are hidden and never listed as snapshots.
      expect(await new FileSnapshotStorage(dir).listSnapshotIds({ location: loc('crash') })).toEqual([])
    }
    expect(kills).toBeGreaterThan(0)
  })
})
