// Shared test harness: drives a ContextOffloader plugin (the SDK's or ours) without a
// real model call, with real SDK events, blocks, model (token counting) and sandbox.
import {
  Agent,
  SessionManager,
  AfterToolCallEvent,
  BeforeModelCallEvent,
  DocumentBlock,
  ImageBlock,
  JsonBlock,
  Model,
  TextBlock,
  ToolResultBlock,
  VideoBlock,
} from '@strands-agents/sdk'
import * as sdkOffloader from '@strands-agents/sdk/vended-plugins/context-offloader'
import { mkdtempSync, rmSync } from 'node:fs'
import { afterAll } from 'vitest'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export { sdkOffloader }

/** The first text of the tool result in the last message (its content as JSON when it has no text). */
export function lastToolResultText(messages: any[]): string {
  const last = messages[messages.length - 1]
  const result = last.content.find((b: any) => b.type === 'toolResultBlock')
  return result.content.find((c: any) => c.type === 'textBlock')?.text ?? JSON.stringify(result.content)
}

/**
 * Calls a tool as the SDK's executor does (`tool.stream(context)`, drained) and returns
 * the text of its result's first block.
 */
export async function toolAnswer(tool: any, input: object, agent?: unknown): Promise<string> {
  const gen = tool.stream({ toolUse: { name: tool.name, toolUseId: 'call', input }, agent })
  let next = await gen.next()
  while (!next.done) next = await gen.next()
  return next.value.content[0].text as string
}

/**
 * A real SessionManager for `sessionId` over `snapshot` storage (an agent then has that
 * `sessionId`).
 */
export function sessionManagerFor(sessionId: string, snapshot: unknown): any {
  return new SessionManager({ sessionId, storage: { snapshot } } as any)
}

export type AnyPlugin = any

/** One scripted model turn: the events `stream()` yields for it. */
export type Turn = (messages: any[]) => any[]

/**
 * An offline model: `stream()` replays scripted turns and records what it was sent.
 * `countTokens` is the SDK's real default heuristic (inherited from `Model`).
 */
export class ScriptedModel extends Model<any> {
  config: any = { modelId: 'scripted-offline' }
  seen: any[] = []
  turns: Turn[]
  constructor(turns: Turn[] = []) {
    super()
    this.turns = turns
  }
  updateConfig(config: any) {
    Object.assign(this.config, config)
  }
  getConfig() {
    return this.config
  }
  async *stream(messages: any[]): AsyncIterable<any> {
    // Snapshot what the model sees (as the wire JSON), before the agent mutates anything.
    this.seen.push(JSON.parse(JSON.stringify(messages)))
    const turn = this.turns[this.seen.length - 1]
    if (!turn) throw new Error(`no scripted turn ${this.seen.length}`)
    for (const event of turn(messages)) yield event
  }
}

/** Events of a turn that calls one tool. */
export function toolCallTurn(name: string, toolUseId: string, input: unknown): any[] {
  return [
    { type: 'modelMessageStartEvent', role: 'assistant' },
    { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name, toolUseId } },
    { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify(input) } },
    { type: 'modelContentBlockStopEvent' },
    { type: 'modelMessageStopEvent', stopReason: 'toolUse' },
  ]
}

/** Events of a turn that answers with text. */
export function textTurn(text: string): any[] {
  return [
    { type: 'modelMessageStartEvent', role: 'assistant' },
    { type: 'modelContentBlockStartEvent' },
    { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text } },
    { type: 'modelContentBlockStopEvent' },
    { type: 'modelMessageStopEvent', stopReason: 'endTurn' },
  ]
}

let defaultSandbox: any
/** The sandbox the SDK registers for Node (what `agent.sandbox` of a real Agent is). */
export function nodeSandbox(): any {
  if (!defaultSandbox) defaultSandbox = new Agent({ model: new ScriptedModel(), printer: false }).sandbox
  return defaultSandbox
}

/** A minimal agent that collects hook callbacks and lets a test fire events. */
export class FakeAgent {
  hooks = new Map<any, Array<(e: any) => any>>()
  metrics = { cycleCount: 0 }
  model = new ScriptedModel()
  sandbox = nodeSandbox()
  storage: any = undefined
  addHook(eventClass: any, cb: (e: any) => any) {
    const list = this.hooks.get(eventClass) ?? []
    list.push(cb)
    this.hooks.set(eventClass, list)
    return () => {}
  }
  async fire(event: any) {
    for (const cb of this.hooks.get(event.constructor) ?? []) await cb(event)
    return event
  }
}

/** A plugin attached to a fake agent, with helpers to offload and retrieve. */
export class Driven {
  agent = new FakeAgent()
  plugin: AnyPlugin
  private nextId = 0
  constructor(plugin: AnyPlugin, agentStorage?: any) {
    this.plugin = plugin
    if (agentStorage) this.agent.storage = agentStorage
    plugin.initAgent(this.agent)
  }
  get tool(): any {
    return this.plugin.getTools()[0]
  }
  /** Runs the AfterToolCallEvent hooks on a result; returns the resulting ToolResultBlock. */
  async offload(content: any[], opts: { status?: 'success' | 'error'; toolName?: string; toolUseId?: string } = {}) {
    const toolUseId = opts.toolUseId ?? `tool-${++this.nextId}`
    const result = new ToolResultBlock({ toolUseId, status: opts.status ?? 'success', content })
    const event = new AfterToolCallEvent({
      agent: this.agent,
      toolUse: { name: opts.toolName ?? 'some_tool', toolUseId, input: {} },
      tool: undefined,
      result,
      invocationState: {},
    } as any)
    await this.agent.fire(event)
    return event.result as any
  }
  async beforeModelCall(cycleCount: number) {
    this.agent.metrics.cycleCount = cycleCount
    await this.agent.fire(
      new BeforeModelCallEvent({ agent: this.agent, model: this.agent.model, invocationState: {} } as any),
    )
  }
  /** Calls the retrieval tool the way the agent does (stream), returning the ToolResultBlock JSON. */
  async retrieve(input: any): Promise<any> {
    const toolUse = { name: 'retrieve_offloaded_content', toolUseId: `r-${++this.nextId}`, input }
    const gen = this.tool.stream({ agent: this.agent, toolUse, interrupt: undefined })
    let step = await gen.next()
    while (!step.done) step = await gen.next()
    const json = JSON.parse(JSON.stringify(step.value))
    json.toolResult.toolUseId = 'r'
    return json
  }
  /** The retrieval tool's raw return value (`invoke`). */
  async invoke(input: any): Promise<any> {
    const toolUse = { name: 'retrieve_offloaded_content', toolUseId: `r-${++this.nextId}`, input }
    return this.tool.invoke(input, { agent: this.agent, toolUse })
  }
}

/** The text of a retrieval result (first text block), for readable assertions. */
export function textOf(resultJson: any): string {
  const c = resultJson.toolResult.content[0]
  if (c && 'text' in c) return c.text
  return JSON.stringify(c)
}

export const asJson = (x: unknown) => JSON.parse(JSON.stringify(x))

/** Replaces the millisecond timestamps of FileStorage file names. */
export function normalizeTimestamps(s: string): string {
  return s.replace(/(^|[/\\\s])\d{10,}_(\d+_)/g, '$1<ms>_$2')
}

export function tempDir(prefix = 'co-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) }
}

/**
 * A maker of temporary directories (named `<prefix>…`) for one test file: every directory
 * it made is removed after the file's tests (`afterAll`).
 */
export function tempDirs(prefix: string): () => string {
  const cleanups: Array<() => void> = []
  afterAll(() => cleanups.forEach((cleanup) => cleanup()))
  return () => {
    const d = tempDir(prefix)
    cleanups.push(d.cleanup)
    return d.path
  }
}

/** Seeded PRNG (mulberry32). */
export function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    bool: (p = 0.5) => next() < p,
  }
}

/** Whether a string has an unpaired surrogate code unit. */
export function hasLoneSurrogate(s: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)
}

/** Removes unpaired surrogate code units. */
export function dropLoneSurrogates(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
}

export { TextBlock, JsonBlock, ImageBlock, VideoBlock, DocumentBlock, ToolResultBlock }
