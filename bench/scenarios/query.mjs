/**
 * Scenario: a jq query over a 20 MB JSON tool result, through this package's
 * retrieval tool with `retrieval: 'extended'` (`{ reference, query }`), against
 * what an application does without it: read the stored bytes back, `JSON.parse`,
 * filter in JavaScript and print each result as compact JSON. The SDK has no query;
 * its column holds the JavaScript way, over the same stored block. Both must produce
 * the same text.
 */
import { callTool, createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { random } from '../lib/data.mjs'
import { compare } from '../lib/measure.mjs'
import { bar, row, times } from '../lib/results.mjs'

export const id = 'query'
export const title = 'Retrieval tool: jq query on a 20 MB JSON block vs JSON.parse + a JavaScript filter'

const TARGET_BYTES = 20_000_000
const ROLES = ['member', 'member', 'member', 'viewer', 'admin']

/** A pretty-printed JSON document of users, about `bytes` long (deterministic). */
function usersDocument(bytes) {
  const next = random(7)
  const users = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const user = {
      id: i,
      name: `user ${i}`,
      email: `user${i}@example.com`,
      role: ROLES[Math.floor(next() * ROLES.length)],
      active: next() < 0.8,
      logins: Math.floor(next() * 1000),
      tags: ['alpha', 'beta', 'gamma'].slice(0, 1 + Math.floor(next() * 3)),
    }
    users.push(user)
    size += JSON.stringify(user, null, 2).length + 6
  }
  return JSON.stringify({ users, total: users.length }, null, 2)
}

const QUERIES = [
  {
    label: '.users[] | select(.role == "admin") | .email',
    query: '.users[] | select(.role == "admin") | .email',
    js: (doc) => doc.users.filter((u) => u.role === 'admin').map((u) => JSON.stringify(u.email)),
  },
  {
    label: '[.users[] | select(.active and .logins > 900)] | length',
    query: '[.users[] | select(.active and .logins > 900)] | length',
    js: (doc) => [JSON.stringify(doc.users.filter((u) => u.active && u.logins > 900).length)],
  },
]

export async function run({ impls, quick }) {
  const plan = quick ? { warmup: 1, reps: 3 } : { warmup: 2, reps: 9 }
  const text = usersDocument(TARGET_BYTES)
  const rows = []
  const bars = []
  const details = { bytes: Buffer.byteLength(text), queries: [] }
  if (!impls.ours) return { rows, bars: [bar(id, 'jq answers equal JSON.parse + filter', null, 'ours not loaded')], details }
  const storage = new impls.ours.InMemoryStorage()
  const { agent, plugin } = createPluginAgent(impls.ours, storage, {
    retrieval: 'extended',
    maxResultTokens: 1_000_000,
    previewTokens: 100,
  })
  const [reference] = referencesIn(await offload(agent, text))
  const tool = plugin.getTools()[0]
  for (const q of QUERIES) {
    const outputs = { sdk: [], ours: [] }
    const results = await compare(
      {
        sdk: {
          run: async () => {
            const { content } = await storage.retrieve(reference)
            const doc = JSON.parse(new TextDecoder().decode(content))
            outputs.sdk.push(q.js(doc).join('\n'))
          },
        },
        ours: {
          run: async () => {
            outputs.ours.push(await callTool(tool, { reference, query: q.query }, agent))
          },
        },
      },
      plan,
    )
    const sameOutput = outputs.sdk[0] === outputs.ours[0]
    const r = row(id, `20 MB JSON: ${q.label} (JS column: JSON.parse + filter)`, 'ms', results, { sameOutput })
    r.note = `${sameOutput ? 'same output' : 'OUTPUTS DIFFER'}; JS/ours ${times(r.ratio)}`
    rows.push(r)
    details.queries.push({ label: q.label, sameOutput, lines: outputs.ours[0]?.split('\n').length })
    bars.push(bar(id, `jq answer equals JSON.parse + filter: ${q.label}`, sameOutput, `${outputs.ours[0]?.split('\n').length} lines`))
  }
  return { rows, bars, details }
}
