// The `retrieve_offloaded_content` tool as every framework sees it: its name, its
// description and its input schema (the SDK's, byte for byte, unless extended retrieval
// is on) as plain JSON Schema, and the check of a tool call's input, with no schema
// library and no agent framework. The Strands plugin builds the same schema with zod
// (./retrieval-tool.js); a test holds the two equal.

/** The tool's name, as the SDK names it. */
export const RETRIEVAL_TOOL_NAME = 'retrieve_offloaded_content'

/** What each input field says to the model. */
export const FIELD_DESCRIPTIONS = {
  reference: 'The reference string from the offload placeholder (e.g. "mem_1_tool-123_0").',
  extendedReference: 'The reference string from the offload placeholder (e.g. "mem_1_tool-123_0"). Not needed with list.',
  pattern: 'Regex or keyword to grep for. Returns only matching lines with context — not the full content.',
  line_range: 'Return only this span of lines. Combine with pattern to search within the range.',
  start: 'First line to return (1-indexed).',
  end: 'Last line to return (1-indexed).',
  context_lines:
    'Lines before AND after each match (like grep -C). Default: 5. Without pattern/line_range, returns first N lines.',
  query:
    'A jq expression run on JSON content (e.g. .users[] | select(.role == "admin") | .email). Results come as compact JSON, one per line.',
  page: 'Page of a long answer (1-indexed). An answer longer than the output budget ends with how to get the next page.',
  list: 'true: list what was offloaded in this session, newest first (reference, tool, type, size, tokens, age, first line).',
}

/** The SDK's description of the tool, byte for byte. */
export const RETRIEVAL_TOOL_DESCRIPTION =
  'When a tool result was too large to keep in context, it was stored externally and replaced with a preview and a reference. ' +
  'Use this tool with that reference to access the stored content.\n\n' +
  'Returns:\n' +
  '  - With pattern: matching lines with line numbers and surrounding context\n' +
  '  - With line_range: the specified span of lines with line numbers\n' +
  '  - Without pattern/line_range: the full original content (use sparingly — re-injects all tokens)\n\n' +
  'Constraints:\n' +
  '  - pattern/line_range/context_lines only work on text content. For binary content, omit them.\n' +
  '  - Line numbers in results are 1-indexed and can be used in follow-up line_range calls.\n\n' +
  'Examples:\n' +
  '  { reference: "ref_1", pattern: "error" } → lines containing "error" with 5 lines context\n' +
  '  { reference: "ref_1", pattern: "error|warning", context_lines: 3 } → regex, 3 lines context\n' +
  '  { reference: "ref_1", line_range: { start: 10, end: 25 } } → lines 10-25\n' +
  '  { reference: "ref_1", pattern: "TODO", line_range: { start: 1, end: 50 } } → search within range'

/** The extended tool's description: the SDK's, and what the extension adds. */
export const EXTENDED_DESCRIPTION =
  RETRIEVAL_TOOL_DESCRIPTION +
  '\n\nAlso:\n' +
  '  - With query: a jq expression over JSON content; results as compact JSON, one per line\n' +
  '  - With list: true (no reference): what was offloaded in this session, newest first\n' +
  '  - Long answers come in pages within the output budget; a page that is not the last ends with the page to ask for next\n\n' +
  'More examples:\n' +
  `  { reference: "ref_1", query: '.items[] | select(.status == "failed") | .id' } → the failed items' ids\n` +
  '  { reference: "ref_1", pattern: "error", page: 2 } → the second page of the matches\n' +
  '  { list: true } → what was offloaded in this session'


/** The largest integer a schema allows (zod's bound for `int()`). */
const MAX_SAFE = Number.MAX_SAFE_INTEGER

const int = (minimum) => ({ type: 'integer', minimum, maximum: MAX_SAFE })

/**
 * The tool's input schema as JSON Schema: the SDK's (what its zod schema converts to),
 * or the extended one (`reference` optional, with `query`, `page` and `list`).
 * @param {boolean} extended
 */
export function retrievalInputSchema(extended) {
  const d = FIELD_DESCRIPTIONS
  const properties = {
    reference: { type: 'string', description: extended ? d.extendedReference : d.reference },
    pattern: { description: d.pattern, type: 'string' },
    line_range: {
      description: d.line_range,
      type: 'object',
      properties: { start: { ...int(1), description: d.start }, end: { ...int(1), description: d.end } },
      required: ['start', 'end'],
      additionalProperties: false,
    },
    context_lines: { description: d.context_lines, ...int(0) },
  }
  if (!extended) return { type: 'object', properties, required: ['reference'], additionalProperties: false }
  properties.reference = { description: d.extendedReference, type: 'string' }
  properties.query = { description: d.query, type: 'string' }
  properties.page = { description: d.page, ...int(1) }
  properties.list = { description: d.list, type: 'boolean' }
  return { type: 'object', properties, additionalProperties: false }
}

/** The fields a tool call may give, with how each is checked. */
const FIELDS = {
  reference: (v) => typeof v === 'string' || 'must be a string',
  pattern: (v) => typeof v === 'string' || 'must be a string',
  line_range: (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'must be an object { start, end }'
    for (const side of ['start', 'end']) {
      if (!Number.isSafeInteger(v[side]) || v[side] < 1) return `.${side} must be a whole number of at least 1`
    }
    return true
  },
  context_lines: (v) => (Number.isSafeInteger(v) && v >= 0) || 'must be a whole number of at least 0',
  query: (v) => typeof v === 'string' || 'must be a string',
  page: (v) => (Number.isSafeInteger(v) && v >= 1) || 'must be a whole number of at least 1',
  list: (v) => typeof v === 'boolean' || 'must be true or false',
}

/** The fields of the SDK's tool; the extended tool takes all of {@link FIELDS}. */
const SDK_FIELDS = ['reference', 'pattern', 'line_range', 'context_lines']

/**
 * A tool call's input checked against the tool's schema, as a model sends it through any
 * framework: `null` for an optional field (what strict-schema models send) means absent,
 * unknown fields are left out (as zod's object does), and a wrong one gives an error
 * answer naming the field, never an exception.
 * @param {unknown} input
 * @param {boolean} extended
 * @returns {{ input: object } | { error: string }}
 */
export function checkRetrievalInput(input, extended) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { error: 'Error: invalid input: expected an object such as { "reference": "..." }' }
  }
  const checked = {}
  for (const name of extended ? Object.keys(FIELDS) : SDK_FIELDS) {
    const value = input[name]
    if (value === undefined || value === null) continue
    if (name === 'line_range' && typeof value === 'object' && !Array.isArray(value)) {
      // `{ start, end }` with nulls inside is as absent as a null `line_range`.
      if (value.start == null && value.end == null) continue
    }
    const verdict = FIELDS[name](value)
    if (verdict !== true) return { error: `Error: invalid input: ${name}${verdict.startsWith('.') ? '' : ' '}${verdict}` }
    checked[name] = name === 'line_range' ? { start: value.start, end: value.end } : value
  }
  if (!extended && checked.reference === undefined) return { error: 'Error: invalid input: reference is required' }
  return { input: checked }
}
