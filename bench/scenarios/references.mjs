/**
 * Scenario: with `references: 'opaque'`, can the time of an answer tell a made-up id
 * from an id that was issued and whose artifact was deleted? Both must answer
 * "not found" with the same bytes (the id aside) in about the same time. One
 * FileStorage directory; the session's artifacts are removed (their files, as an operator
 * or another process would) after the plugin loaded its manifest, so the issued id still
 * resolves to a storage reference that is gone (`deleteSession` would remove the ids
 * too). The SDK column holds the deleted id, ours the made-up one.
 */
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { callTool } from '../lib/agent.mjs'
import { compare, freshDir, removeDir } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'references'
export const title = 'Opaque references: time of "not found" for a deleted id vs a made-up one'

export async function run({ impls, quick }) {
  if (!impls.ours) return { rows: [], bars: [bar(id, 'not found in the same time', null, 'ours not loaded')], details: null }
  const { NATIVE } = await import('../../lib/storage/native-backed.js')
  const dir = await freshDir('opaque-references')
  try {
    const storage = new impls.ours.FileStorage(dir)
    const plugin = new impls.ours.ContextOffloader({ storage, references: 'opaque' })
    // A session that persists (an agent with a SessionManager).
    const agent = { sessionId: 'timing', sessionManager: { sessionId: 'timing' } }
    const ids = []
    for (let i = 0; i < 20; i++) {
      const out = await plugin.offload(`line ${i}\n`.repeat(20_000), { key: `tu-${i}`, sessionId: 'timing' })
      ids.push(out.references[0].reference)
    }
    const tool = plugin.getTools()[0]
    // The manifest is loaded; the artifacts go, their ids stay.
    await callTool(tool, { reference: ids[0], line_range: { start: 1, end: 1 } }, agent)
    for (const entry of await storage[NATIVE].listArtifacts()) rmSync(join(dir, entry.name))
    const answers = { deleted: [], forged: [] }
    let k = 0
    const ask = (kind, reference) => async () => {
      const text = await callTool(tool, { reference, pattern: 'line' }, agent)
      answers[kind].push(text.replace(reference, '<id>'))
    }
    const forged = () => `ref_${randomBytes(12).toString('base64url')}`
    const results = await compare(
      {
        sdk: { run: async () => ask('deleted', ids[k++ % ids.length])() },
        ours: { run: async () => ask('forged', forged())() },
      },
      quick ? { warmup: 5, reps: 31 } : { warmup: 20, reps: 201 },
    )
    const same = new Set([...answers.deleted, ...answers.forged]).size === 1
    const r = row(id, 'FileStorage: deleted id (SDK column) vs made-up id (ours), retrieval tool answer', 'ms', results, { sameOutput: same })
    const close = r.ratio != null && r.ratio > 2 / 3 && r.ratio < 1.5
    return {
      rows: [r],
      bars: [
        bar(
          id,
          'a made-up id and a deleted one answer the same bytes, medians within 1.5x of each other',
          same && close,
          `deleted/made-up ${times(r.ratio)}; answers ${same ? 'identical' : 'DIFFER'}`,
        ),
      ],
      details: { answer: answers.forged[0] },
    }
  } finally {
    await removeDir(dir)
  }
}
