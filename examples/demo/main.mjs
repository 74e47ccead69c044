// Demo: a real @strands-agents/sdk Agent, driven by an offline scripted model, calls a
// tool that returns a large service log. context-offloader stores the log on disk,
// shows the model a short preview with references, and the model greps the stored
// log with the retrieve_offloaded_content tool instead of reading all of it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, tool } from '@strands-agents/sdk'
import { z } from 'zod'
import { ContextOffloader, FileStorage } from '../../index.js'
import { ScriptedModel, lastToolResultText } from './scripted-model.mjs'

/** A deterministic service log: mostly INFO lines, a few ERROR timeouts. */
function buildLog(lines) {
  const out = []
  for (let i = 1; i <= lines; i++) {
    const ms = String(i % 1000).padStart(3, '0')
    if (i % 9973 === 0) {
      out.push(`2026-11-22T10:${String(i % 60).padStart(2, '0')}:00.${ms}Z ERROR payments: upstream timeout after 30000 ms (order=${i})`)
    } else {
      out.push(`2026-11-22T10:${String(i % 60).padStart(2, '0')}:00.${ms}Z INFO  http: GET /api/orders/${i} 200 ${(i * 7) % 250} ms`)
    }
  }
  return out.join('\n')
}

const log = buildLog(40_000)
const fetchLogs = tool({
  name: 'fetch_logs',
  description: 'Returns the service log of the last hour.',
  inputSchema: z.object({ service: z.string() }),
  callback: () => log,
})

let reference = ''
const model = new ScriptedModel([
  () => ({ toolUse: { name: 'fetch_logs', input: { service: 'payments' } } }),
  (messages) => {
    const seen = lastToolResultText(messages)
    reference = /\[Stored references:\]\n\s+(\S+)/.exec(seen)?.[1] ?? ''
    return { toolUse: { name: 'retrieve_offloaded_content', input: { reference, pattern: 'ERROR.*timeout', context_lines: 1 } } }
  },
  (messages) => {
    const matches = (lastToolResultText(messages).match(/^> /gm) ?? []).length
    return { text: `Found ${matches} upstream timeouts in the payments log.` }
  },
])

const dir = mkdtempSync(join(tmpdir(), 'context-offloader-demo-'))
try {
  const agent = new Agent({
    model,
    tools: [fetchLogs],
    plugins: [new ContextOffloader({ storage: new FileStorage(dir) })],
    printer: false,
  })
  const result = await agent.invoke('Why are payments failing?')

  const preview = lastToolResultText(model.seen[1])
  const grep = lastToolResultText(model.seen[2])
  const rule = '-'.repeat(72)
  console.log(`${rule}\nWhat the model saw instead of the ${log.length.toLocaleString()}-character log:\n${rule}`)
  const previewLines = preview.split('\n')
  console.log([...previewLines.slice(0, 10), '  ...', ...previewLines.slice(-3)].join('\n'))
  console.log(`${rule}\nretrieve_offloaded_content { reference, pattern: 'ERROR.*timeout', context_lines: 1 }:\n${rule}`)
  console.log(grep.split('\n').slice(0, 12).join('\n'))
  console.log(`${rule}\nFinal answer: ${String(result.lastMessage.content.map((c) => c.text ?? '').join(''))}`)
  const logBytes = Buffer.byteLength(log)
  const keptOut = logBytes - Buffer.byteLength(preview)
  console.log(
    `Kept out of context: ${keptOut.toLocaleString()} bytes (~${Math.ceil(keptOut / 4).toLocaleString()} tokens at 4 characters per token); ` +
      `the model saw ${Buffer.byteLength(preview).toLocaleString()} bytes of preview and ${Buffer.byteLength(grep).toLocaleString()} bytes of grep output.`,
  )
  if (!reference || !grep.includes('> ')) {
    console.error('demo failed: the offload or the retrieval did not happen')
    process.exitCode = 1
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
