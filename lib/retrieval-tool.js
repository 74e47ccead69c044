// The `retrieve_offloaded_content` tool of the Strands plugin: the SDK's tool with its
// zod schema (the SDK's, byte for byte, unless extended retrieval is on); the name,
// descriptions and JSON Schema every other framework gets are in ./retrieval-schema.js,
// and ./retrieval.js answers it.
import { tool } from '@strands-agents/sdk'
import { z } from 'zod'
import { EXTENDED_DESCRIPTION, FIELD_DESCRIPTIONS as d, RETRIEVAL_TOOL_DESCRIPTION, RETRIEVAL_TOOL_NAME } from './retrieval-schema.js'
import { toSdkBlock } from './sdk-blocks.js'

export { RETRIEVAL_TOOL_NAME }

const retrievalInputSchema = z.object({
  reference: z.string().describe(d.reference),
  pattern: z.string().optional().describe(d.pattern),
  line_range: z
    .object({
      start: z.number().int().min(1).describe(d.start),
      end: z.number().int().min(1).describe(d.end),
    })
    .optional()
    .describe(d.line_range),
  context_lines: z.number().int().min(0).optional().describe(d.context_lines),
})

/** The extended tool's schema: the SDK's, with `reference` optional (for `list`) and `query`, `page`, `list`. */
const extendedInputSchema = retrievalInputSchema.extend({
  reference: z.string().optional().describe(d.extendedReference),
  query: z.string().optional().describe(d.query),
  page: z.number().int().min(1).optional().describe(d.page),
  list: z.boolean().optional().describe(d.list),
})

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
    callback: (input, context) => retrieval.answer(input, context).then(toSdkBlock),
  })
}
