// The official MCP conformance suite (`@modelcontextprotocol/conformance`, Streamable
// HTTP) against the proxy (`context-offloader mcp --listen`): in front of a test server
// that passes every server scenario alone, the proxy must pass every one too; in front of
// the reference "everything" server (stdio), it must pass every scenario that server
// passes alone (over its own Streamable HTTP).
import { afterAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createServer } from 'node:net'
import { CLI } from './helpers/cli'
import { EVERYTHING } from './helpers/mcp-kit'

const CONFORMANCE = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url))
const TEST_SERVER = fileURLToPath(new URL('./fixtures/mcp/conformance-server.mjs', import.meta.url))

const children: ChildProcess[] = []
const dirs: string[] = []
afterAll(() => {
  for (const child of children) child.kill('SIGTERM')
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Starts a process and resolves with the first match of `pattern` in its stdout or stderr. */
function start(args: string[], pattern: RegExp, env: Record<string, string> = {}): Promise<RegExpMatchArray> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  return new Promise((resolve, reject) => {
    let seen = ''
    const look = (d: Buffer) => {
      seen += d.toString('utf8')
      const match = seen.match(pattern)
      if (match) resolve(match)
    }
    child.stdout!.on('data', look)
    child.stderr!.on('data', look)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${seen}`)))
  })
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.once('error', reject)
  })
}

/** Runs a conformance suite against `url`; resolves with each scenario's outcome (passed: no failure and no warning). */
function conformance(url: string, suite: 'active' | 'pending'): Promise<{ code: number | null; scenarios: Map<string, { passed: boolean; checks: number; problems: string[] }> }> {
  const out = mkdtempSync(join(tmpdir(), 'conformance-'))
  dirs.push(out)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CONFORMANCE, 'server', '--url', url, '--suite', suite, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.resume()
    child.stderr.resume()
    child.once('error', reject)
    child.once('exit', (code) => {
      const scenarios = new Map()
      for (const dir of readdirSync(out)) {
        const name = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '')
        const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Array<{ status: string; id: string; errorMessage?: string }>
        const problems = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`)
        scenarios.set(name, { passed: problems.length === 0, checks: checks.filter((c) => c.status === 'SUCCESS').length, problems })
      }
      resolve({ code, scenarios })
    })
  })
}

const passing = (scenarios: Map<string, { passed: boolean }>) => [...scenarios].filter(([, s]) => s.passed).map(([name]) => name).sort()

describe('MCP conformance suite through the proxy', () => {
  it('passes every scenario in front of a server that passes every scenario alone', async () => {
    const [, serverUrl] = await start([TEST_SERVER, '0'], /listening (http:\/\/\S+\/mcp)/)
    const url = serverUrl.replace('127.0.0.1', 'localhost')
    const [, proxyPort] = await start([CLI, 'mcp', '--listen', '127.0.0.1:0', '--url', url], /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/)
    const proxyUrl = `http://localhost:${proxyPort}/mcp`
    for (const suite of ['active', 'pending'] as const) {
      const alone = await conformance(url, suite)
      const through = await conformance(proxyUrl, suite)
      expect(alone.code).toBe(0)
      expect(alone.scenarios.size).toBe(suite === 'active' ? 30 : 2)
      expect([...alone.scenarios.values()].every((s) => s.passed)).toBe(true)
      const problems = [...through.scenarios].filter(([, s]) => !s.passed).map(([name, s]) => `${name}: ${s.problems.join('; ')}`)
      expect(problems).toEqual([])
      expect(passing(through.scenarios)).toEqual(passing(alone.scenarios))
      expect(through.code).toBe(0)
    }
  }, 120_000)

  it('passes every scenario server-everything passes alone, in front of it over stdio', async () => {
    const port = await freePort()
    await start([EVERYTHING[1], 'streamableHttp'], /listening on port \d+/, { PORT: String(port) })
    const alone = await conformance(`http://localhost:${port}/mcp`, 'active')
    const [, proxyPort] = await start([CLI, 'mcp', '--listen', '127.0.0.1:0', '--', ...EVERYTHING], /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/)
    const through = await conformance(`http://localhost:${proxyPort}/mcp`, 'active')
    const alonePassing = passing(alone.scenarios)
    // It passes only some: the scenarios call their own test tools, resources and prompts.
    expect(alonePassing.length).toBeGreaterThanOrEqual(8)
    expect(alonePassing.length).toBeLessThan(30)
    const throughPassing = passing(through.scenarios)
    expect(throughPassing).toEqual(expect.arrayContaining(alonePassing))
    // The proxy adds DNS-rebinding protection the server lacks.
    expect(throughPassing).toContain('dns-rebinding-protection')
  }, 120_000)
})
