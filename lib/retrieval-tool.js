// The `retrieve_offloaded_content` tool: its name, input schema and description (the
// SDK's, byte for byte) and its answers: the full content, or a grep / line slice of it.
import { tool } from '@strands-agents/sdk'
import { z } from 'zod'
import { decodeStoredContent } from './content.js'
import { isFullRetrieval, searchStored } from './search.js'
import { retrieveContent } from './storage/unified.js'

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

/**
 * The retrieval tool. Every failure (unknown reference, unreadable storage, no tool
 * context) answers `Error: reference not found: <reference>`, as the SDK's does; an
 * artifact that expired or was evicted for a byte budget says which.
 * @param {{ maxChars: number, storageFor: (context: unknown) => object }} options -
 *   the output budget in UTF-16 units, and the storage that serves a tool call
 */
export function createRetrievalTool({ maxChars, storageFor }) {
  return tool({
    name: RETRIEVAL_TOOL_NAME,
    description: RETRIEVAL_TOOL_DESCRIPTION,
    inputSchema: retrievalInputSchema,
    callback: async (input, context) => {
      try {
        const storage = storageFor(context)
        if (!isFullRetrieval(input)) return await searchStored(storage, input, maxChars)
        const result = await retrieveContent(storage, input.reference)
        return decodeStoredContent(result.content, result.contentType, input.reference)
      } catch (err) {
        // An artifact that expired or was evicted for the byte budget says so.
        const reason = /^Reference not found \((expired|evicted to stay under maxBytes)\)/.exec(String(err?.message ?? ''))?.[1]
        return reason
          ? `Error: reference not found (${reason}): ${input.reference}`
          : `Error: reference not found: ${input.reference}`
      }
    },
  })
}
