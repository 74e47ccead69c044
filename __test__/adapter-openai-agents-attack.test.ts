// context-offloader/openai-agents against the SDK's own promises in its real loop
// (`run()`, driven by `ScriptedModel`): a tool's output guardrails and custom data
// extractor read the tool's own output, not the preview that replaces it; a tool's
// `timeoutMs` bounds the tool, not the time its result takes to be stored; and typed
// tools keep their run context's type.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { Agent, RunContext, defineToolOutputGuardrail, run, tool, ToolGuardrailFunctionOutputFactory } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing'
import { InMemoryStorage } from '../core.js'
import { offloadTools } from '../openai-agents.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RETRIEVE = 'retrieve_offloaded_content'
const SCHEMA = {
  type: 'object',
  properties: { n: { type: 'integer' } },
  required: ['n'],
  additionalProperties: false,
} as const
/** `n` log lines; the fifth from the end holds a secret. */
const rows = (n: number) => Array.from({ length: n }, (_, i) => `row ${i}: status ok${i === n - 5 ? ' SECRET-TOKEN' : ''}`).join('\n')
const textOf = (output: any): string => (Array.isArray(output) ? output.map((o) => o.text ?? '').join('\n') : output.text)
/** The tool results in the model's input on call `i`, by call id. */
function resultsSeen(model: ScriptedModel, i: number): Record<string, any> {
  const items = model.calls[i].request.input as any[]
  return Object.fromEntries(items.filter((it) => it.type === 'function_call_result').map((it) => [it.callId, textOf(it.output)]))
}
const referencesIn = (preview: string) => [...preview.matchAll(/^ {2}(\S+) \(/gm)].map((m) => m[1])

describe("a tool's output guardrails", () => {
  /** A guardrail that rejects any output with a secret in it, recording what it saw. */
  function noSecrets(seen: unknown[]) {
    return defineToolOutputGuardrail({
      name: 'no_secrets',
      run: async ({ output }) => {
        seen.push(output)
        const text = typeof output === 'string' ? output : JSON.stringify(output)
        return text.includes('SECRET') ? ToolGuardrailFunctionOutputFactory.rejectContent('blocked: the output holds a secret') : ToolGuardrailFunctionOutputFactory.allow()
      },
    })
  }
  const logs = (seen: unknown[]) =>
    tool({ name: 'logs', description: 'Logs.', parameters: SCHEMA, execute: async ({ n }: any) => rows(n), outputGuardrails: [noSecrets(seen)] } as any)

  test('check the whole output, not the preview: what they reject never reaches the model (as without the adapter)', async () => {
    for (const wrapped of [false, true]) {
      const seen: unknown[] = []
      const tools = wrapped ? offloadTools([logs(seen)]) : [logs(seen)]
      const model = new ScriptedModel([[functionCall('logs', { n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
      await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go')
      expect(resultsSeen(model, 1).c1).toBe('blocked: the output holds a secret')
      expect(seen).toEqual([rows(3000)])
    }
  })

  test('an output they allow is offloaded, and they saw all of it', async () => {
    const seen: unknown[] = []
    const model = new ScriptedModel([[functionCall('logs', { n: 3 }, { callId: 'c0' })], [functionCall('logs', { n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
    const clean = (n: number) => rows(n).replace(' SECRET-TOKEN', '')
    const logsTool = tool({ name: 'logs', description: 'Logs.', parameters: SCHEMA, execute: async ({ n }: any) => clean(n), outputGuardrails: [noSecrets(seen)] } as any)
    await run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([logsTool]) }), 'go')
    expect(seen).toEqual([clean(3), clean(3000)])
    expect(resultsSeen(model, 1).c0).toBe(clean(3))
    expect(resultsSeen(model, 2).c1).toMatch(/^\[Offloaded: /)
  })

  test('the retrieval tool cannot hand out what a guardrail rejected in a preview it let through', async () => {
    const seen: unknown[] = []
    const model = new ScriptedModel([
      [functionCall('logs', { n: 3000 }, { callId: 'c1' })],
      modelResponder((call) => {
        const preview = textOf((call.request.input as any[]).find((i) => i.callId === 'c1' && i.type === 'function_call_result').output)
        const reference = referencesIn(preview)[0] ?? 'none'
        return [functionCall(RETRIEVE, { reference, pattern: 'SECRET', line_range: null, context_lines: 0 }, { callId: 'r1' })]
      }),
      [assistantMessage('done')],
    ])
    await run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([logs(seen)]) }), 'go')
    expect(resultsSeen(model, 2).r1).not.toContain('SECRET-TOKEN')
  })
})

describe("a tool's custom data extractor", () => {
  test('makes the custom data of each call from the tool\'s own output, parallel calls and structured outputs included', async () => {
    const PNG = Buffer.alloc(3_000, 7).toString('base64')
    const logs = tool({
      name: 'logs',
      description: 'Logs.',
      parameters: SCHEMA,
      execute: async ({ n }: any) => {
        await new Promise((resolve) => setTimeout(resolve, n === 3000 ? 30 : 1))
        return n === 2 ? [{ type: 'text', text: rows(4000) }, { type: 'image', image: { data: PNG, mediaType: 'image/png' } }] : rows(n)
      },
      customDataExtractor: ({ output }: any) => ({ lines: typeof output === 'string' ? output.split('\n').length : output.map((o: any) => o.type).join('+') }),
    } as any)
    const model = new ScriptedModel([
      [functionCall('logs', { n: 3000 }, { callId: 'c1' }), functionCall('logs', { n: 3 }, { callId: 'c2' }), functionCall('logs', { n: 2 }, { callId: 'c3' })],
      [assistantMessage('done')],
    ])
    const result = await run(new Agent({ name: 'a', instructions: 'x', model, tools: offloadTools([logs]) }), 'go')
    const custom = Object.fromEntries(
      result.newItems.filter((i: any) => i.type === 'tool_call_output_item').map((i: any) => [i.rawItem.callId, i.customData]),
    )
    expect(custom).toEqual({ c1: { lines: 3000 }, c2: { lines: 3 }, c3: { lines: 'text+image' } })
    expect(resultsSeen(model, 1).c1).toMatch(/^\[Offloaded: /)
    expect(resultsSeen(model, 1).c3).toMatch(/^\[Offloaded: /)
  })
})

describe("a tool's timeoutMs", () => {
  /** An in-memory storage that takes `ms` to store each block. */
  function slowStorage(ms: number) {
    const inner = new InMemoryStorage()
    return {
      store: async (key: string, content: Uint8Array, contentType?: string) => {
        await new Promise((resolve) => setTimeout(resolve, ms))
        return inner.store(key, content, contentType)
      },
      retrieve: (reference: string) => inner.retrieve(reference),
    }
  }
  const timed = (toolMs: number, extra: Record<string, unknown> = {}) =>
    tool({
      name: 'logs',
      description: 'Logs.',
      parameters: SCHEMA,
      timeoutMs: 150,
      execute: async ({ n }: any) => {
        await new Promise((resolve) => setTimeout(resolve, toolMs))
        return rows(n)
      },
      ...extra,
    } as any)

  test('bounds the tool: a result it returned in time is not turned into a timeout by the time storing it takes', async () => {
    const model = new ScriptedModel([[functionCall('logs', { n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
    const tools = offloadTools([timed(5)], { storage: slowStorage(400) })
    await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go')
    expect(resultsSeen(model, 1).c1).toMatch(/^\[Offloaded: /)
  })

  test('a tool that runs past it still gets the SDK timeout text (never offloaded), or its error with raise_exception', async () => {
    const model = new ScriptedModel([[functionCall('logs', { n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
    const tools = offloadTools([timed(400)], { shouldOffload: () => true })
    await run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'go')
    expect(resultsSeen(model, 1).c1).toBe("Tool 'logs' timed out after 150ms.")

    const raising = new ScriptedModel([[functionCall('logs', { n: 3000 }, { callId: 'c1' })], [assistantMessage('done')]])
    const agent = new Agent({ name: 'a', instructions: 'x', model: raising, tools: offloadTools([timed(400, { timeoutBehavior: 'raise_exception' })]) })
    await expect(run(agent, 'go')).rejects.toThrow(/timed out after 150ms/)
  })
})

test('typings: a tool typed with its run context compiles through offloadTools() as it does without it (tsc --strict, skipLibCheck: false)', () => {
  const dir = mkdtempSync(join(ROOT, '.attack-types-'))
  try {
    writeFileSync(
      join(dir, 'consumer.ts'),
      `import { Agent, run, tool, webSearchTool, type RunContext } from '@openai/agents'
import { offloadTools } from '../openai-agents.js'
type Ctx = { userId: string }
const parameters = { type: 'object' as const, properties: {}, required: [] as string[], additionalProperties: false as const }
const whoami = tool({ name: 'whoami', description: 'The user.', parameters, execute: async (_input: unknown, rc?: RunContext<Ctx>) => rc?.context.userId ?? '' })
const plain = tool({ name: 'plain', description: 'Plain.', parameters, execute: async () => 'x' })
export const without = new Agent({ name: 'a', instructions: 'i', tools: [whoami] })
export const inferred = new Agent({ name: 'a', instructions: 'i', tools: offloadTools([whoami]) })
export const mixed = offloadTools([whoami, plain, webSearchTool()])
export const typedAgent = new Agent<Ctx>({ name: 'a', instructions: 'i', tools: offloadTools([plain], { sessionId: (rc) => rc.context.userId }) })
export const typedSession = new Agent({ name: 'a', instructions: 'i', tools: offloadTools([whoami], { sessionId: (rc) => rc.context.userId }) })
void run(inferred, 'hi', { context: { userId: 'u' } })
// @ts-expect-error a session function must answer a string
offloadTools([whoami], { sessionId: (rc) => rc.context })
`,
    )
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] },
        files: ['consumer.ts'],
      }),
    )
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: ROOT, encoding: 'utf8' })
    expect(r.stdout + r.stderr).toBe('')
    expect(r.status).toBe(0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 180_000)
