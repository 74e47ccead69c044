// The `retrieve_offloaded_content` tool: its name, input schema and description (the
// SDK's, byte for byte, unless extended retrieval is on); ./retrieval.js answers it.
import { tool } from '@strands-agents/sdk'
import { z } from 'zod'

/** The tool's name, as the SDK names it. */
export const RETRIEVAL_TOOL_NAME = 'retrieve_offloaded_content'

const retrievalInputSchema = z.object({
  reference: z.string().describe('The reference string from the offload placeholder (e.g. "mem_1_tool-123_0").'),
  pattern: z
    .string()
    .optional()
    .describe('Regex or keyword to grep for. Returns only matching lines with context — not the full content.'),
  line_range: z
    .object({
      start: z.number().int().min(1).describe('First line to return (1-indexed).'),
      end: z.number().int().min(1).describe('Last line to return (1-indexed).'),
    })
    .optional()
    .describe('Return only this span of lines. Combine with pattern to search within the range.'),
  context_lines: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Lines before AND after each match (like grep -C). Default: 5. Without pattern/line_range, returns first N lines.',
    ),
})

const RETRIEVAL_TOOL_DESCRIPTION =
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

/** The extended tool's schema: the SDK's, with `reference` optional (for `list`) and `query`, `page`, `list`. */
const extendedInputSchema = retrievalInputSchema.extend({
  reference: z
    .string()
    .optional()
    .describe('The reference string from the offload placeholder (e.g. "mem_1_tool-123_0"). Not needed with list.'),
  query: z
    .string()
    .optional()
    .describe(
      'A jq expression run on JSON content (e.g. .users[] | select(.role == "admin") | .email). Results come as compact JSON, one per line.',
    ),
  page: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Page of a long answer (1-indexed). An answer longer than the output budget ends with how to get the next page.'),
  list: z
    .boolean()
    .optional()
    .describe('true: list what was offloaded in this session, newest first (reference, tool, type, size, tokens, age, first line).'),
})

const EXTENDED_DESCRIPTION =
  RETRIEVAL_TOOL_DESCRIPTION +
  '\n\nAlso:\n' +
  '  - With query: a jq expression over JSON content; results as compact JSON, one per line\n' +
  '  - With list: true (no reference): what was offloaded in this session, newest first\n' +
  '  - Long answers come in pages within the output budget; a page that is not the last ends with the page to ask for next\n\n' +
  'More examples:\n' +
  `  { reference: "ref_1", query: '.items[] | select(.status == "failed") | .id' } → the failed items' ids\n` +
  '  { reference: "ref_1", pattern: "error", page: 2 } → the second page of the matches\n' +
  '  { list: true } → what was offloaded in this session'

/**
 * The retrieval tool. Its name, schema and description are the SDK's unless `extended`;
 * its answers come from `retrieval` (see ./retrieval.js).
 * @param {{ extended: boolean, retrieval: import('./retrieval.js').Retrieval }} options
 */
export function createRetrievalTool({ extended, retrieval }) {
  return tool({
    name: RETRIEVAL_TOOL_NAME,
    description: extended ? EXTENDED_DESCRIPTION : RETRIEVAL_TOOL_DESCRIPTION,
    inputSchema: extended ? extendedInputSchema : retrievalInputSchema,
    callback: (input, context) => retrieval.answer(input, context),
  })
}
