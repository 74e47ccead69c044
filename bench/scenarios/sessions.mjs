/**
 * Scenario: session snapshots. A real agent session of 200 messages (text turns and
 * tool calls with results, about 200 KB of JSON) saved and loaded through the SDK's
 * session `FileStorage` and through our `FileSnapshotStorage`, each on a fresh
 * directory:
 *
 * - one save of the 200-message snapshot to `snapshot_latest.json`;
 * - one load of it;
 * - the session growing message by message with a save after each one (what
 *   `saveLatestOn: 'message'` does): 200 saves, total.
 *
 * The snapshot is taken from a real `Agent` (`takeSnapshot({ preset: 'session' })`),
 * so it has exactly the shape the SessionManager writes.
 */
import { Agent, FileStorage as SdkSnapshotStorage } from '@strands-agents/sdk'
import { compare, freshDir, removeDir } from '../lib/measure.mjs'
import { createAgent } from '../lib/agent.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'sessions'
export const title = 'Session snapshots: 200-message session saved and loaded'

const MESSAGES = 200
const location = { sessionId: 'bench-session', scope: 'agent', scopeId: 'agent' }

/** Deterministic conversation of `count` messages: text turns and tool round trips. */
function conversation(count) {
  const messages = []
  for (let i = 0; messages.length < count; i++) {
    const words = `turn ${i}: ` + 'the quick brown fox jumps over the lazy dog '.repeat(8 + (i % 7))
    if (i % 3 === 2) {
      messages.push({ role: 'assistant', content: [{ toolUse: { name: 'lookup', toolUseId: `t${i}`, input: { query: words.slice(0, 80), page: i } } }] })
      messages.push({ role: 'user', content: [{ toolResult: { toolUseId: `t${i}`, status: 'success', content: [{ text: words.repeat(3) }, { json: { rows: Array.from({ length: 10 }, (_, k) => ({ k, v: `${i}-${k}` })) } }] } }] })
    } else {
      messages.push({ role: 'user', content: [{ text: words }] })
      messages.push({ role: 'assistant', content: [{ text: words.toUpperCase() }] })
    }
  }
  return messages.slice(0, count)
}

/** Snapshots of the session after 1, 2, ..., `count` messages (the last one is the full session). */
function snapshots(count) {
  const all = conversation(count)
  const out = []
  for (let n = 1; n <= count; n++) {
    const agent = new Agent({ model: createAgent().model, messages: all.slice(0, n), printer: false })
    out.push(agent.takeSnapshot({ preset: 'session' }))
  }
  return out
}

export async function run({ impls, quick }) {
  const ours = impls.ours ? (await import('../../index.js')).FileSnapshotStorage : null
  const growing = snapshots(MESSAGES)
  const full = growing.at(-1)
  const bytes = JSON.stringify(full, null, 2).length
  const reps = quick ? 15 : 60
  const growReps = quick ? 5 : 15

  const kinds = { sdk: (dir) => new SdkSnapshotStorage(dir), ours: ours && ((dir) => new ours(dir)) }
  const spec = (make, prepare, body, n = reps) =>
    make && {
      reps: n,
      setup: async () => {
        const dir = await freshDir(`sessions-${id}`)
        const storage = make(dir)
        await prepare(storage)
        return { dir, storage }
      },
      run: ({ storage }) => body(storage),
      teardown: ({ dir }) => removeDir(dir),
    }
  const save = (s) => s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot: full })
  const none = async () => {}
  const sides = (prepare, body, n) => ({ sdk: spec(kinds.sdk, prepare, body, n), ours: spec(kinds.ours, prepare, body, n) })

  // A first save into the directory is not timed: it creates the directories, as the
  // first save of a session does once.
  const saveResults = await compare(sides(save, save), { warmup: 5 })
  const loadResults = await compare(
    sides(save, async (s) => {
      const loaded = await s.loadSnapshot({ location })
      if (loaded?.data?.messages?.length !== MESSAGES) throw new Error('loaded snapshot is incomplete')
    }),
    { warmup: 5 },
  )
  const growResults = await compare(
    sides(none, async (s) => {
      for (const snapshot of growing) await s.saveSnapshot({ location, snapshotId: 'latest', isLatest: true, snapshot })
    }, growReps),
    { warmup: 2 },
  )

  const kb = `${Math.round(bytes / 1024)} KB`
  const rows = [
    row(id, `save ${MESSAGES}-message session (${kb})`, 'ms', saveResults),
    row(id, `load ${MESSAGES}-message session (${kb})`, 'ms', loadResults),
    row(id, `${MESSAGES} saves as the session grows, total`, 'ms', growResults),
  ]
  const notSlower = (r) => (r.ratio == null ? null : r.ratio >= 0.95)
  const bars = rows.map((r) => bar(id, `${r.case}: ours no slower (5% noise allowance)`, notSlower(r), `SDK/ours ${times(r.ratio)}`))
  return { rows, bars, details: { messages: MESSAGES, snapshotBytes: bytes } }
}
