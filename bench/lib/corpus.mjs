/**
 * Deterministic generated texts of several kinds, for token counting: a mixed
 * tool-result text (logs, prose, code, JSON, some CJK) and single-kind corpora
 * (code, minified JSON, CJK prose, base64, UUID lists, English prose). Each is
 * written into a Buffer once; `fresh` turns it into a new flat string per run.
 */

import { random } from './data.mjs'

const WORDS = (
  'the a an of to in for on with by from agent model tool result context window token preview store ' +
  'retrieve offload message request response server client cache index query search stream event ' +
  'large small fast slow returns keeps writes reads counts replaces sends waits fails retries'
).split(' ')
const NAMES = ['items', 'orders', 'users', 'search', 'health', 'metrics', 'sessions', 'invoices']
const CJK_SENTENCES = [
  '東京は今日も晴れで、気温は二十五度です。',
  'エージェントはツールの結果を保存し、プレビューに置き換えます。',
  '大きな出力はコンテキストウィンドウに入りません。',
  '我们把工具返回的大量日志保存起来，只保留摘要。',
  '模型需要时可以按行号或正则表达式检索原文。',
  '한국어 문장도 조금 섞여 있습니다.',
]

const pick = (next, items) => items[Math.floor(next() * items.length)]
const int = (next, n) => Math.floor(next() * n)

function sentence(next) {
  const n = 6 + int(next, 14)
  const words = Array.from({ length: n }, () => pick(next, WORDS))
  words[0] = words[0][0].toUpperCase() + words[0].slice(1)
  if (next() < 0.3) words.splice(1 + int(next, n - 1), 0, String(int(next, 10_000)))
  return `${words.join(' ')}${pick(next, ['.', '.', '.', '?', '!', ';'])}`
}

function logLine(next, i) {
  const s = i % 86_400
  const time = `2024-05-01T${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z`
  const level = next() < 0.03 ? 'ERROR' : next() < 0.06 ? 'WARN ' : 'INFO '
  return `${time} ${level} worker-${int(next, 8)} GET /api/v1/${pick(next, NAMES)}/${int(next, 100_000)} status=${pick(next, [200, 200, 200, 404, 500])} duration_ms=${int(next, 900)} trace=${int(next, 2 ** 32).toString(16)}`
}

function codeBlock(next, i) {
  const name = `${pick(next, WORDS)}_${pick(next, NAMES)}_${i}`
  return [
    `export async function ${name}(input, options = {}) {`,
    `  const limit = options.limit ?? ${int(next, 5000)}`,
    `  for (let i = 0; i < input.length; i++) {`,
    `    if (input[i].${pick(next, WORDS)} > limit) return { ok: false, index: i, reason: '${sentence(next).slice(0, 30)}' }`,
    `  }`,
    `  return { ok: true, count: input.length * ${int(next, 100)} }`,
    `}`,
  ].join('\n')
}

function record(next, i) {
  return {
    id: i,
    uuid: uuid(next),
    name: `${pick(next, WORDS)}-${int(next, 10_000)}`,
    price: Math.round(next() * 100_000) / 100,
    tags: [pick(next, WORDS), pick(next, WORDS)],
    active: next() < 0.5,
    owner: { team: pick(next, NAMES), level: int(next, 5) },
  }
}

function uuid(next) {
  const hex = (n) => Array.from({ length: n }, () => int(next, 16).toString(16)).join('')
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(next, ['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`
}

/** Appends generated lines until `units` UTF-16 units; returns a UTF-8 Buffer. */
function build(units, makeLine) {
  const lines = []
  let length = 0
  for (let i = 0; length < units; i++) {
    const line = makeLine(i)
    lines.push(line)
    length += line.length + 1
  }
  return Buffer.from(lines.join('\n'), 'utf8')
}

/**
 * A tool-result-like text of about `units` characters: application logs, prose,
 * code, JSON lines and some CJK prose.
 */
export function mixedText(units, seed = 11) {
  const next = random(seed)
  return build(units, (i) => {
    const roll = next()
    if (roll < 0.4) return logLine(next, i)
    if (roll < 0.6) return Array.from({ length: 3 }, () => sentence(next)).join(' ')
    if (roll < 0.8) return codeBlock(next, i)
    if (roll < 0.95) return JSON.stringify(record(next, i))
    return pick(next, CJK_SENTENCES) + pick(next, CJK_SENTENCES)
  })
}

/** Single-kind corpora of about `units` characters each, by label. */
export function corpora(units, seed = 23) {
  const next = random(seed)
  const base64Line = () => Buffer.from(Array.from({ length: 57 }, () => int(next, 256))).toString('base64')
  let json = ''
  for (let i = 0; json.length < units; i++) json += (i === 0 ? '[' : ',') + JSON.stringify(record(next, i))
  return {
    code: build(units, (i) => codeBlock(next, i)),
    'minified JSON': Buffer.from(`${json}]`, 'utf8'),
    'CJK text': build(units, () => Array.from({ length: 4 }, () => pick(next, CJK_SENTENCES.slice(0, 5))).join('')),
    base64: build(units, base64Line),
    'UUID list': build(units, () => uuid(next)),
    'English prose': build(units, () => Array.from({ length: 5 }, () => sentence(next)).join(' ')),
  }
}

/** A new flat string with the buffer's UTF-8 content. */
export function fresh(buffer) {
  return buffer.toString('utf8')
}
