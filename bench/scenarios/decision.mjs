/**
 * The offload decision ("does this tool result exceed maxResultTokens?") on a 10 MB
 * text result, with exact o200k counting. Three ways to decide, timed in one run:
 *
 * - ours: the plugin's decision step with `tokenizer: 'o200k_base'` (the part of the
 *   AfterToolCallEvent hook that runs before anything is stored);
 * - js-tiktoken: a full o200k encode of the result, what an exact count costs in JavaScript;
 * - SDK heuristic: the SDK plugin's own decision, `model.countTokens` on the result
 *   with the base Model's characters/4 rule (not exact).
 *
 * Bars: ours >= 100x faster than the full js-tiktoken encode, and within 3x of the
 * heuristic (ours / heuristic <= 3). A second case, a 300 kB result (short enough that
 * its length alone does not prove the limit is passed), shows the early exit: ours
 * encodes only until 2,500 tokens are passed.
 */
import { Message, Model, TextBlock, ToolResultBlock } from '@strands-agents/sdk'
import { Tiktoken } from 'js-tiktoken/lite'
import o200k from 'js-tiktoken/ranks/o200k_base'
import { compare } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 'decision'
export const title = 'Offload decision on a 10 MB result: native o200k early exit vs full encode vs heuristic'

/** The SDK's base Model (its countTokens is the characters/4 heuristic). */
class HeuristicModel extends Model {
  getConfig() {
    return { modelId: 'bench' }
  }
  updateConfig() {}
  async *stream() {}
}

/** Generated log-like text of about `units` UTF-16 units. */
function logText(units) {
  const lines = []
  let length = 0
  for (let i = 0; length < units; i++) {
    const line = `2026-11-22T06:${String(i % 60).padStart(2, '0')}:00Z INFO worker-${i % 16} request id=${(i * 7919) % 100000} path=/api/v1/items/${i % 997} status=200 in ${(i * 13) % 900} ms`
    lines.push(line)
    length += line.length + 1
  }
  return lines.join('\n')
}

export async function run({ impls, quick, log }) {
  const rows = []
  const bars = []
  if (!impls.ours) {
    bars.push(bar(id, 'decision bars', null, 'ours not loaded'))
    return { rows, bars }
  }
  const ours = await import(new URL('../../index.js', import.meta.url).href)
  const plugin = new ours.ContextOffloader({ tokenizer: 'o200k_base' })
  await plugin._encodingReady
  const model = new HeuristicModel()
  const t0 = performance.now()
  const encoder = new Tiktoken(o200k)
  log(`  js-tiktoken o200k vocabulary loaded in ${ms(performance.now() - t0)}`)

  const cases = [
    { label: '10 MB text result', units: 10 * 1024 * 1024, bars: true },
    { label: '300 kB text result (length alone does not decide)', units: 300 * 1024, bars: false },
  ]
  for (const c of cases) {
    const text = logText(c.units)
    const result = new ToolResultBlock({ toolUseId: 'bench', status: 'success', content: [new TextBlock(text)] })
    const decisions = {}
    const oursSpec = {
      reps: quick ? 20 : 50,
      warmup: 3,
      run: async () => {
        decisions.ours = (await plugin._decide(result.content, result, undefined)).exceeds
      },
    }
    const fullEncode = {
      reps: quick ? 1 : c.bars ? 3 : 10,
      warmup: c.bars ? 0 : 1,
      run: async () => {
        decisions.full = encoder.encode(text).length > 2500
      },
    }
    const heuristic = {
      reps: quick ? 20 : 50,
      warmup: 3,
      run: async () => {
        decisions.heuristic = (await model.countTokens([new Message({ role: 'user', content: [result] })])) > 2500
      },
    }
    const plan = { warmup: 1, reps: 5 }
    const vsEncode = await compare({ sdk: fullEncode, ours: oursSpec }, plan)
    const vsHeuristic = await compare({ sdk: heuristic, ours: oursSpec }, plan)
    const encodeRow = row(id, `${c.label}: js-tiktoken full encode (sdk column) vs ours`, 'ms', vsEncode)
    const heuristicRow = row(id, `${c.label}: SDK heuristic (sdk column) vs ours`, 'ms', vsHeuristic)
    rows.push(encodeRow, heuristicRow)
    const agree = decisions.ours === true && decisions.full === true
    log(
      `  ${c.label}: ours ${ms(vsEncode.ours.median)}, js-tiktoken full encode ${ms(vsEncode.sdk.median)} (${times(encodeRow.ratio)}), ` +
        `heuristic ${ms(vsHeuristic.sdk.median)} (ours/heuristic ${(vsHeuristic.ours.median / vsHeuristic.sdk.median).toFixed(2)})`,
    )
    if (!c.bars) continue
    bars.push(
      bar(
        id,
        'decision on 10 MB with o200k_base >= 100x faster than a full js-tiktoken encode',
        agree && encodeRow.ratio >= 100,
        `ours ${ms(vsEncode.ours.median)}, js-tiktoken ${ms(vsEncode.sdk.median)} = ${times(encodeRow.ratio)}; both decide "offload": ${agree}`,
      ),
    )
    const slower = vsHeuristic.ours.median / vsHeuristic.sdk.median
    bars.push(
      bar(
        id,
        "decision on 10 MB with o200k_base within 3x of the SDK's heuristic count",
        slower <= 3,
        `ours ${ms(vsHeuristic.ours.median)}, heuristic ${ms(vsHeuristic.sdk.median)}: ours/heuristic = ${slower.toFixed(2)}`,
      ),
    )
  }
  return { rows, bars }
}
