// A real SDK Agent with a scripted offline model: a tool returns a ~200 KB log, the plugin
// offloads it, the model greps it with the retrieval tool, then answers. The same script
// runs through the SDK's plugin and ours; the model must see identical inputs.
import { afterAll, describe, expect, test } from 'vitest'
import { Agent, tool } from '@strands-agents/sdk'
import { z } from 'zod'
import * as ours from '../index.js'
import { ScriptedModel, normalizeTimestamps, sdkOffloader, tempDir, textTurn, toolCallTurn } from './helpers/harness.js'

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((c) => c()))

const NEEDLE = 'E4711'
const LOG = Array.from({ length: 3100 }, (_, i) => {
  if (i === 1733) return `2024-06-01T10:17:33Z ERROR code=${NEEDLE} disk full on /var/lib/data (write failed)`
  return `2024-06-01T10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z INFO  worker=${i % 8} handled request #${i} in ${(i * 13) % 97}ms`
}).join('\n')

/** The text blocks inside the tool result of the last message. */
function lastToolResultTexts(messages: any[]): string[] {
  const last = messages[messages.length - 1]
  const result = last.content.find((b: any) => b.type === 'toolResultBlock')
  return result.content.filter((c: any) => c.type === 'textBlock').map((c: any) => c.text)
}

type Impl = 'sdk' | 'ours'
type Kind = 'memory' | 'file' | 'omitted'

async function runScript(impl: Impl, kind: Kind) {
  const lib: any = impl === 'sdk' ? sdkOffloader : ours
  let storage: any
  let dir: string | undefined
  if (kind === 'memory') storage = new lib.InMemoryStorage()
  if (kind === 'file') {
    const d = tempDir(`co-agent-${impl}-`)
    cleanups.push(d.cleanup)
    dir = d.path
    storage = new lib.FileStorage(dir)
  }
  const plugin = new lib.ContextOffloader(storage ? { storage } : {})

  const observed: any = {}
  const model = new ScriptedModel([
    () => toolCallTurn('fetch_logs', 'tu-1', { service: 'storage' }),
    (messages) => {
      const texts = lastToolResultTexts(messages)
      observed.turn2Texts = texts
      const ref = /\n {2}(\S.*?) \(text, [\d,]+ chars\)/.exec(texts[0]!)?.[1]
      observed.ref = ref
      return toolCallTurn('retrieve_offloaded_content', 'tu-2', { reference: ref, pattern: `code=${NEEDLE}`, context_lines: 2 })
    },
    (messages) => {
      const texts = lastToolResultTexts(messages)
      observed.turn3Texts = texts
      const hit = texts[0]!.split('\n').find((l) => l.startsWith('>'))
      return textTurn(`The failure is: ${hit}`)
    },
  ])
  const fetchLogs = tool({
    name: 'fetch_logs',
    description: 'Returns the logs of a service',
    inputSchema: z.object({ service: z.string() }),
    callback: () => LOG,
  })
  const agent = new Agent({ model, tools: [fetchLogs], plugins: [plugin], printer: false })
  const result = await agent.invoke('Why did the storage service fail?')
  // trackingId is a random UUID per message; the rest must match exactly
  let seen = JSON.stringify(model.seen, (k, v) => (k === 'trackingId' ? '<uuid>' : v))
  if (dir) seen = seen.split(dir).join('<dir>')
  seen = normalizeTimestamps(seen)
  return { result, observed, seen: JSON.parse(seen), agent, dir }
}

describe.each(['memory', 'file', 'omitted'] as Kind[])('agent loop with a scripted model (%s storage)', (kind) => {
  test('offload, grep with the retrieval tool, answer; identical model inputs with the SDK plugin', { timeout: 120_000 }, async () => {
    const o = await runScript('ours', kind)
    const s = await runScript('sdk', kind)

    // turn 2 saw a preview with references, not the full log
    const preview = o.observed.turn2Texts[0] as string
    expect(o.observed.turn2Texts.length).toBe(1)
    expect(preview.startsWith('[Offloaded: 1 blocks, ~')).toBe(true)
    expect(preview).toContain('[Stored references:]')
    expect(preview.length).toBeLessThan(6_000)
    expect(preview).not.toContain(NEEDLE)
    expect(LOG.length).toBeGreaterThan(190_000)
    expect(JSON.stringify(o.seen[1]).length).toBeLessThan(20_000)
    if (kind === 'memory') expect(o.observed.ref).toBe('mem_1_tu-1_0')
    if (kind === 'omitted') expect(o.observed.ref).toBe('tu-1_0')
    if (kind === 'file') expect(o.observed.ref).toMatch(new RegExp(`^${o.dir}/\\d+_1_tu-1_0\\.txt$`))

    // the retrieval result is the grep output with '>' markers
    const grep = o.observed.turn3Texts[0] as string
    expect(grep.startsWith(`[1 match for /code=${NEEDLE}/]`)).toBe(true)
    expect(grep).toContain(`> 1734| 2024-06-01T10:17:33Z ERROR code=${NEEDLE} disk full`)
    expect(grep.split('\n').filter((l) => /^ {2}\d+\| /.test(l)).length).toBe(4)

    // the final answer arrives
    expect(String(o.result)).toContain(`The failure is: > 1734| 2024-06-01T10:17:33Z ERROR code=${NEEDLE}`)
    expect(o.result.stopReason).toBe('endTurn')

    // the SDK's plugin produced exactly the same model inputs (modulo file timestamps)
    expect(o.seen.length).toBe(3)
    expect(o.seen).toEqual(s.seen)
    expect(String(o.result)).toBe(String(s.result))
  })
})
