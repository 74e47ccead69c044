// A sandboxed agent (Docker, SSH, ...) finds offloaded artifacts where its own tools
// look: FileStorage writes and reads them through the agent's sandbox, as the SDK's
// does. The sandbox here keeps its files under a private directory the host never sees
// at the artifact path; the host default keeps the native path.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Agent, tool } from '@strands-agents/sdk'
import { Sandbox } from '@strands-agents/sdk/sandbox'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ContextOffloader, FileStorage } from '../index.js'
import { ScriptedModel, tempDir, textTurn, toolCallTurn } from './helpers/harness'

const work = tempDir('co-sandbox-')
afterAll(() => work.cleanup())

/** A sandbox whose file system is a private directory: `/x/y` there is `<root>/x/y` here. */
class DirectorySandbox extends Sandbox {
  reads: string[] = []
  constructor(readonly root: string) {
    super()
  }
  private at(path: string) {
    return join(this.root, path.replace(/^\/+/, ''))
  }
  async readFile(path: string) {
    this.reads.push(path)
    return new Uint8Array(readFileSync(this.at(path)))
  }
  async writeFile(path: string, content: Uint8Array) {
    mkdirSync(dirname(this.at(path)), { recursive: true })
    writeFileSync(this.at(path), content)
  }
  async removeFile(path: string) {
    rmSync(this.at(path))
  }
  async listFiles(path: string) {
    return readdirSync(this.at(path)).map((name) => ({ name, isDir: false }))
  }
  async *executeStreaming(): AsyncGenerator<never, any> {
    return { exitCode: 1, stdout: '', stderr: 'no shell here' }
  }
  async *executeCodeStreaming(): AsyncGenerator<never, any> {
    return { exitCode: 1, stdout: '', stderr: 'no interpreter here' }
  }
}

describe('FileStorage for an agent in a sandbox', () => {
  it('writes through the sandbox, at the path the preview names, and searches what it reads back', async () => {
    const sandbox = new DirectorySandbox(join(work.path, 'sandbox-root'))
    const artifactDir = '/workspace/artifacts'
    const log = Array.from({ length: 3000 }, (_, i) => `line ${i} ${i % 1000 === 7 ? 'FATAL disk' : 'ok'}`).join('\n')
    const model = new ScriptedModel([
      () => toolCallTurn('logs', 't1', {}),
      (messages) => {
        const text = JSON.stringify(messages.at(-1))
        const reference = /(\/workspace\/artifacts\/\S+?\.txt)/.exec(text)![1]
        return toolCallTurn('retrieve_offloaded_content', 't2', { reference, pattern: 'FATAL' })
      },
      () => textTurn('done'),
    ])
    const logs = tool({ name: 'logs', description: 'logs', inputSchema: z.object({}), callback: () => log })
    const agent = new Agent({ model, sandbox, printer: false, tools: [logs], plugins: [new ContextOffloader({ storage: new FileStorage(artifactDir) })] })
    await agent.invoke('go')

    const inside = join(sandbox.root, 'workspace', 'artifacts')
    const names = readdirSync(inside).sort()
    expect(names).toHaveLength(2)
    expect(names[0]).toBe('.metadata.json')
    expect(readFileSync(join(inside, names[1]!), 'utf8')).toBe(log)
    expect(JSON.parse(readFileSync(join(inside, '.metadata.json'), 'utf8'))).toEqual({ [names[1]!]: 'text/plain' })
    // Nothing reached the host at the artifact path.
    expect(existsSync(artifactDir)).toBe(false)
    // The preview named the sandbox path; the grep answered from the bytes read back through it.
    const preview = JSON.stringify(model.seen[1])
    expect(preview).toContain(`${artifactDir}/${names[1]}`)
    const grep = JSON.stringify(model.seen[2])
    expect(grep).toContain('[3 matches for /FATAL/]')
    expect(sandbox.reads).toContain(`${artifactDir}/${names[1]}`)
  })

  it('on the host (no sandbox configured) the native path is kept', async () => {
    const dir = join(work.path, 'host-artifacts')
    const model = new ScriptedModel([() => toolCallTurn('logs', 't1', {}), () => textTurn('done')])
    const logs = tool({ name: 'logs', description: 'logs', inputSchema: z.object({}), callback: () => 'x\n'.repeat(20_000) })
    const agent = new Agent({ model, printer: false, tools: [logs], plugins: [new ContextOffloader({ storage: new FileStorage(dir) })] })
    await agent.invoke('go')
    const names = readdirSync(dir)
    expect(names).toContain('.metadata.journal')
    expect(names).not.toContain('.metadata.json')
  })
})
