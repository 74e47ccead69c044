/**
 * Scenario: a jq query over a 20 MB JSON tool result, through this package's
 * retrieval tool with `retrieval: 'extended'` (`{ reference, query }`), against
 * what an application does without it: read the stored bytes back, `JSON.parse`,
 * filter in JavaScript and print each result as compact JSON. The SDK has no query;
 * its column holds the JavaScript way, over the same stored block. Both must produce
 * the same text.
 *
 * Every answer here is one page; the answer cache is turned off all the same (and
 * checked empty), so no query is ever answered from a kept answer. Queries read the
 * document into values once per version of the stored content and keep it (the query
 * document cache): a *cold* query finds nothing kept (the cache is emptied before each
 * run, untimed, and its documents are dropped before the clock starts) and reads the
 * document; a *warm* query runs on the document an earlier query with another
 * expression kept.
 */
import { callTool, createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { random } from '../lib/data.mjs'
import { compare, sleep } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

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

/** A cheap query that reads the whole document: mostly the reading, against `JSON.parse`. */
const READ = {
  label: 'length (reading the document)',
  query: 'length',
  js: (doc) => [JSON.stringify(Object.keys(doc).length)],
}

/** Budget of the query document cache during the scenario (the default). */
const QUERY_CACHE_BYTES = 512 * 1024 * 1024
/** Cold must be at least this much faster than JSON.parse + filter; warm this much faster than cold. */
const COLD_RATIO = 1.0
const WARM_RATIO = 5

export async function run({ impls, quick }) {
  const plan = quick ? { warmup: 1, reps: 3 } : { warmup: 2, reps: 9 }
  const text = usersDocument(TARGET_BYTES)
  const rows = []
  const bars = []
  const details = { bytes: Buffer.byteLength(text), queries: [] }
  if (!impls.ours) return { rows, bars: [bar(id, 'jq answers equal JSON.parse + filter', null, 'ours not loaded')], details }
  const native = (await import('../../lib/native.js')).native
  const storage = new impls.ours.InMemoryStorage()
  const { agent, plugin } = createPluginAgent(impls.ours, storage, {
    retrieval: 'extended',
    maxResultTokens: 1_000_000,
    previewTokens: 100,
  })
  const [reference] = referencesIn(await offload(agent, text))
  const tool = plugin.getTools()[0]
  const ask = (query) => callTool(tool, { reference, query }, agent)
  /** Empties the document cache and lets its documents go before a timed run. */
  const forget = async () => {
    native.setQueryCacheBytes(0)
    native.setQueryCacheBytes(QUERY_CACHE_BYTES)
    await sleep(300)
  }
  const js = (q) => async () => {
    const { content } = await storage.retrieve(reference)
    const doc = JSON.parse(new TextDecoder().decode(content))
    return q.js(doc).join('\n')
  }
  const noKeptAnswers = () => native.answerCacheStats().entries === 0
  native.setAnswerCacheBytes(0)
  try {
    // Cold: every run reads the document (parse included).
    for (const q of [READ, ...QUERIES]) {
      const outputs = { sdk: [], ours: [] }
      const results = await compare(
        {
          sdk: { run: async () => outputs.sdk.push(await js(q)()) },
          ours: { setup: forget, run: async () => outputs.ours.push(await ask(q.query)) },
        },
        plan,
      )
      const sameOutput = outputs.sdk[0] === outputs.ours[0] && noKeptAnswers()
      const r = row(id, `20 MB JSON, cold (the query reads the document): ${q.label} (JS column: JSON.parse + filter)`, 'ms', results, { sameOutput })
      r.note = `${sameOutput ? 'same output' : 'OUTPUTS DIFFER'}; JS/ours ${times(r.ratio)}`
      rows.push(r)
      details.queries.push({ label: q.label, cold: true, sameOutput, lines: outputs.ours[0]?.split('\n').length })
      if (q !== READ) bars.push(bar(id, `jq answer equals JSON.parse + filter: ${q.label}`, sameOutput, `${outputs.ours[0]?.split('\n').length} lines`))
      const name = q === READ ? 'reading a 20 MB JSON document (cold `length`) at least as fast as JSON.parse' : `cold jq query at least ${COLD_RATIO.toFixed(1)}x JSON.parse + filter (medians): ${q.label}`
      bars.push(bar(id, name, r.ratio != null && r.ratio >= COLD_RATIO && sameOutput, `${times(r.ratio)}: JS ${ms(results.sdk.median)}, ours ${ms(results.ours.median)}`))
    }
    // Warm: the document was kept by an earlier query with another expression.
    for (const q of QUERIES) {
      const outputs = { sdk: [], ours: [] }
      const results = await compare(
        {
          sdk: { run: async () => outputs.sdk.push(await js(q)()) },
          ours: {
            setup: async () => {
              await forget()
              await ask(READ.query)
            },
            run: async () => outputs.ours.push(await ask(q.query)),
          },
        },
        plan,
      )
      const sameOutput = outputs.sdk[0] === outputs.ours[0] && noKeptAnswers()
      const r = row(id, `20 MB JSON, warm (document kept by an earlier query): ${q.label} (JS column: JSON.parse + filter)`, 'ms', results, { sameOutput })
      r.note = `${sameOutput ? 'same output' : 'OUTPUTS DIFFER'}; JS/ours ${times(r.ratio)}`
      rows.push(r)
      details.queries.push({ label: q.label, cold: false, sameOutput, lines: outputs.ours[0]?.split('\n').length })
    }
    // The first query on a document (cold) against a second one with another expression (warm).
    const [first, second] = QUERIES
    const outputs = { first: [], second: [] }
    const results = await compare(
      {
        sdk: { setup: forget, run: async () => outputs.first.push(await ask(first.query)) },
        ours: {
          setup: async () => {
            await forget()
            await ask(first.query)
          },
          run: async () => outputs.second.push(await ask(second.query)),
        },
      },
      plan,
    )
    const expected = { first: await js(first)(), second: await js(second)() }
    const sameOutput = outputs.first[0] === expected.first && outputs.second[0] === expected.second && noKeptAnswers()
    const r = row(id, `20 MB JSON: first query, cold (${first.label}) vs second query, warm (${second.label})`, 'ms', results, { sameOutput })
    r.note = `both columns ours; ${sameOutput ? 'same output as JS' : 'OUTPUTS DIFFER'}; cold/warm ${times(r.ratio)}`
    rows.push(r)
    bars.push(
      bar(
        id,
        `second jq query on the same document (another expression, warm) at least ${WARM_RATIO}x faster than the first (cold, medians)`,
        r.ratio != null && r.ratio >= WARM_RATIO && sameOutput,
        `${times(r.ratio)}: first ${ms(results.sdk.median)}, second ${ms(results.ours.median)}`,
      ),
    )
  } finally {
    native.setAnswerCacheBytes(512 * 1024 * 1024)
    native.setQueryCacheBytes(QUERY_CACHE_BYTES)
  }
  return { rows, bars, details }
}
