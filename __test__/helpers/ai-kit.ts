// The Vercel AI SDK under test, shared by the adapter's suites: one version's modules (ai 7
// as `ai`, ai 6 installed as `ai-v6` and given to the adapter as `ai`), the adapter and
// the core loaded against it, a scripted mock model of that version, and readers of what
// the model was sent.
import { vi } from 'vitest'

/** One AI SDK version under test: its modules, and the adapter and core loaded against it. */
export interface Kit {
  version: 6 | 7
  ai: any
  Mock: any
  convertArrayToReadableStream: any
  offloadTools: any
  core: any
  logger: any
  /**
   * The call settings that give the tools (a tool set, or their names) `ctx` as their
   * context (ai 7 `toolsContext`, ai 6 `experimental_context`).
   */
  context(tools: object | string[], ctx: unknown): object
}

/** Loads the adapter and the core afresh with `ai` resolving to the version under test. */
export async function load(version: 6 | 7): Promise<Kit> {
  vi.resetModules()
  if (version === 6) vi.doMock('ai', () => import('ai-v6'))
  else vi.doUnmock('ai')
  const ai = version === 6 ? await import('ai-v6') : await import('ai')
  const mocks: any = version === 6 ? await import('ai-v6/test') : await import('ai/test')
  const { offloadTools } = await import('../../ai.js')
  const core = await import('../../core.js')
  const { logger } = await import('../../lib/sdk.js')
  return {
    version,
    ai,
    Mock: version === 6 ? mocks.MockLanguageModelV3 : mocks.MockLanguageModelV4,
    convertArrayToReadableStream: mocks.convertArrayToReadableStream,
    offloadTools,
    core,
    logger,
    context: (tools, ctx) => {
      if (version === 6) return { experimental_context: ctx }
      const names = Array.isArray(tools) ? tools : Object.keys(tools)
      return { toolsContext: Object.fromEntries(names.map((name) => [name, ctx])) }
    },
  }
}


export const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
export const toolCall = (toolCallId: string, toolName: string, input: object = {}) => ({ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) })
export const text = (t: string) => ({ type: 'text', text: t })

/** A model turn: what the model answers, given the prompt it was sent. */
export type Turn = (prompt: any[]) => any[]

/** A scripted mock model of the version under test (generate and stream), replaying `turns`. */
export function scripted(kit: Kit, turns: Array<Turn | any[]>) {
  const respond = (prompt: any[], n: number) => {
    const turn = turns[n]
    if (!turn) throw new Error(`no scripted turn ${n + 1}`)
    const content = typeof turn === 'function' ? turn(prompt) : turn
    const unified = content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop'
    return { content, finishReason: { unified, raw: undefined }, usage, warnings: [] }
  }
  const model: any = new kit.Mock({
    supportedUrls: { 'image/*': [/^https:/] },
    doGenerate: async (options: any) => respond(options.prompt, model.doGenerateCalls.length - 1),
    doStream: async (options: any) => {
      const { content, finishReason } = respond(options.prompt, model.doStreamCalls.length - 1)
      const parts: any[] = [{ type: 'stream-start', warnings: [] }]
      content.forEach((c, i) => {
        if (c.type === 'text') parts.push({ type: 'text-start', id: `t${i}` }, { type: 'text-delta', id: `t${i}`, delta: c.text }, { type: 'text-end', id: `t${i}` })
        else parts.push(c)
      })
      parts.push({ type: 'finish', finishReason, usage })
      return { stream: kit.convertArrayToReadableStream(parts) }
    },
  })
  return model
}

/** The tool results in a prompt, by tool call id: their `output` as the model got it. */
export function toolOutputs(prompt: any[]): Record<string, any> {
  const outputs: Record<string, any> = {}
  for (const message of prompt) {
    if (message.role !== 'tool') continue
    for (const part of message.content) if (part.type === 'tool-result') outputs[part.toolCallId] = part.output
  }
  return outputs
}

/** The prompts the model was sent, step by step. */
export const prompts = (model: any) => [...model.doGenerateCalls, ...model.doStreamCalls].map((c: any) => c.prompt)

/** The first reference listed in a preview. */
export function referenceIn(preview: string): string {
  const match = /\[Stored references:\]\n\s+(\S+) \(/.exec(preview)
  if (!match) throw new Error(`no reference in ${preview.slice(0, 200)}`)
  return match[1]!
}

/** Execute options as the SDK gives them, for calling a wrapped tool directly. */
export const callOptions = (toolCallId: string, ctx?: unknown) => ({ toolCallId, messages: [], context: ctx, experimental_context: ctx })

