// Runs the command-line tool as users do: a separate Node process on bin/context-offloader.mjs.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../bin/context-offloader.mjs', import.meta.url))

export interface CliRun {
  code: number | null
  stdout: string
  stdoutBytes: Buffer
  stderr: string
}

/** Runs `context-offloader ...args`; `env` is added to the environment (NO_COLOR, AWS_*). */
export function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (d) => out.push(d))
    child.stderr.on('data', (d) => err.push(d))
    child.on('error', reject)
    child.on('close', (code) => {
      const stdoutBytes = Buffer.concat(out)
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr: Buffer.concat(err).toString('utf8') })
    })
  })
}

/** Asserts the run failed as a user error must: exit 2, one line on stderr, no stack trace. */
export function expectOneLineError(run: CliRun, expect: any, mentions?: RegExp) {
  expect(run.code, run.stderr).toBe(2)
  expect(run.stderr.endsWith('\n')).toBe(true)
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(run.stderr).toMatch(/^context-offloader: error: \S/)
  expect(run.stderr).not.toMatch(/\n\s+at |node:internal|Error: .*\n/)
  if (mentions) expect(run.stderr).toMatch(mentions)
}

/** The lines of JSON Lines output, parsed. */
export function jsonLines(text: string): any[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}
