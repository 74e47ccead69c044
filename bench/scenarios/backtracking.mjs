/**
 * Scenario 4: backtracking-prone patterns. The SDK runs the agent's pattern with
 * JavaScript's backtracking RegExp, guarded only by a heuristic that rejects
 * nested quantifiers such as `(a+)+`; the patterns below pass that guard yet take
 * exponential time on a line built to defeat them. The adversarial line's length
 * is raised one character at a time until one SDK search takes over a second
 * (`--quick`: a quarter second), then both sides search the same content.
 *
 * The content is 400 ordinary lines (16 kB) plus the adversarial line, offloaded into
 * each plugin's InMemoryStorage; each timed run is one retrieval-tool call.
 */
import { callTool, createPluginAgent, offload, referencesIn } from '../lib/agent.mjs'
import { compare } from '../lib/measure.mjs'
import { bar, ms, row } from '../lib/results.mjs'

export const id = 'backtracking'
export const title = 'Retrieval tool: backtracking-prone patterns'

const PATTERNS = [
  { pattern: '(a|aa)+$', line: (n) => `${'a'.repeat(n)}b`, start: 26 },
  { pattern: '(\\w+\\s?)*$', line: (n) => `${'a'.repeat(n)}!`, start: 18 },
]
/** The SDK's guard (search.js), to confirm the pattern reaches its RegExp. */
const SDK_NESTED_QUANTIFIER = /[+*]\s*\)\s*[+*]/
const OURS_LIMIT_MS = 50

function contentWith(line) {
  const filler = Array.from({ length: 400 }, (_, i) => `entry ${String(i).padStart(6, '0')} status ok service healthy`)
  return Buffer.from([...filler.slice(0, 200), line, ...filler.slice(200)].join('\n'), 'latin1').toString('latin1')
}

async function prepare(impl, text) {
  const { agent, plugin } = createPluginAgent(impl, new impl.InMemoryStorage())
  const [reference] = referencesIn(await offload(agent, text))
  return { agent, tool: plugin.getTools()[0], reference }
}

async function search(prepared, pattern) {
  return callTool(prepared.tool, { reference: prepared.reference, pattern, context_lines: 0 }, prepared.agent)
}

/** Grows the adversarial line until one SDK search takes at least `targetMs`. */
async function calibrate(impl, { pattern, line, start }, targetMs, log) {
  for (let n = start; n < start + 40; n++) {
    const text = contentWith(line(n))
    const prepared = await prepare(impl, text)
    const t0 = performance.now()
    await search(prepared, pattern)
    const elapsed = performance.now() - t0
    if (elapsed >= targetMs) {
      log(`  ${pattern}: SDK ${ms(elapsed)} at line length ${n + 1}`)
      return { n, text }
    }
  }
  throw new Error(`no line length up to ${start + 40} makes the SDK take ${targetMs} ms on ${pattern}`)
}

export async function run({ impls, quick, log }) {
  const targetMs = quick ? 250 : 1_100
  const plan = { warmup: 0, reps: 5, sdk: { reps: quick ? 1 : 3 } }
  const rows = []
  const bars = []
  const details = []
  for (const candidate of PATTERNS) {
    if (SDK_NESTED_QUANTIFIER.test(candidate.pattern)) throw new Error(`the SDK would not run ${candidate.pattern} as a regex`)
    const { n, text } = await calibrate(impls.sdk, candidate, targetMs, log)
    const prepared = { sdk: await prepare(impls.sdk, text), ours: impls.ours && (await prepare(impls.ours, text)) }
    const outputs = {}
    const spec = (side) =>
      prepared[side] && {
        reps: side === 'sdk' ? plan.sdk.reps : plan.reps,
        warmup: side === 'sdk' ? 0 : 1,
        run: async () => {
          outputs[side] = await search(prepared[side], candidate.pattern)
        },
      }
    const results = await compare({ sdk: spec('sdk'), ours: spec('ours') }, plan)
    const sameOutput = prepared.ours ? outputs.sdk === outputs.ours : null
    const r = row(id, `/${candidate.pattern}/, adversarial line of ${n + 1} chars`, 'ms', results, { sameOutput })
    rows.push(r)
    details.push({ pattern: candidate.pattern, lineLength: n + 1, sameOutput, header: { sdk: outputs.sdk?.split('\n')[0], ours: outputs.ours?.split('\n')[0] } })
    const sdkSlow = r.sdk.median > (quick ? 250 : 1_000)
    const pass = r.ours == null ? null : sdkSlow && r.ours.median < OURS_LIMIT_MS
    bars.push(
      bar(
        id,
        `/${candidate.pattern}/: ours under ${OURS_LIMIT_MS} ms where the SDK takes over ${quick ? '0.25' : '1'} s`,
        pass,
        `SDK ${ms(r.sdk.median)}, ours ${ms(r.ours?.median)}, output ${sameOutput == null ? 'n/a' : sameOutput ? 'identical' : 'DIFFERS'}`,
      ),
    )
  }
  rows.push(...(await countedRepetition(impls, quick, bars, details)))
  return { rows, bars, details }
}

/**
 * A linear-engine pattern whose every byte costs thousands of steps: `a[ab]{10000}[^ab]`
 * over 1 MB of random `a`/`b` (one line, and lines of 100). Ours must answer, with a
 * result or a clear error, within 2 s; the SDK (V8's backtracking) takes seconds, so it
 * runs once.
 */
async function countedRepetition(impls, quick, bars, details) {
  const pattern = 'a[ab]{10000}[^ab]'
  let seed = 12345
  const ab = (n) => {
    let out = ''
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0
      out += seed & 0x10000 ? 'a' : 'b'
    }
    return out
  }
  const rows = []
  for (const [label, text] of [
    ['one line', ab(1 << 20)],
    ['lines of 100', Array.from({ length: (1 << 20) / 101 }, () => ab(100)).join('\n')],
  ]) {
    const prepared = { sdk: await prepare(impls.sdk, text), ours: impls.ours && (await prepare(impls.ours, text)) }
    const outputs = {}
    const spec = (side, reps) =>
      prepared[side] && {
        reps,
        warmup: 0,
        run: async () => {
          outputs[side] = await search(prepared[side], pattern)
        },
      }
    const results = await compare({ sdk: spec('sdk', 1), ours: spec('ours', quick ? 2 : 5) }, { warmup: 0, reps: 5 })
    const r = row(id, `/${pattern}/ over 1 MB of a/b, ${label}`, 'ms', results)
    rows.push(r)
    details.push({ pattern, label, answers: { sdk: outputs.sdk?.slice(0, 120), ours: outputs.ours?.slice(0, 120) } })
    const answered = /^(Error: the pattern is too expensive|Error: the search would take longer|No matches found|\[\d+ match)/.test(outputs.ours ?? '')
    bars.push(
      bar(
        id,
        `/${pattern}/ over 1 MB (${label}): a result or a clear error within 2 s`,
        r.ours == null ? null : answered && r.ours.max < 2_000,
        `ours ${ms(r.ours?.median)} (max ${ms(r.ours?.max)}): ${outputs.ours?.slice(0, 60)}…; SDK ${ms(r.sdk.median)}`,
      ),
    )
  }
  return rows
}
