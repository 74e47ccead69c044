// `grep STORE REF PATTERN`: the retrieval tool's search, with its output format byte for
// byte (the same native search), and grep's exit codes.
import { UsageError, oneLine } from '../errors.js'
import { missingReference } from '../read.js'
import { resolveReference } from '../manifest-ids.js'
import { STORE_HELP, STORE_OPTIONS, openArtifactStore } from '../stores.js'
import { parseCount, parseLineRange } from '../units.js'

/** The largest answer the native search can be asked for (UTF-16 units). */
const UNLIMITED = 2 ** 32 - 1
/** How the search says it found nothing (see crates/search). */
const NO_MATCHES = 'No matches found for pattern '
const EMPTY = 'Content is empty (0 lines).'

export const grep = {
  name: 'grep',
  usage: 'grep STORE REF PATTERN [--session ID] [-C N] [--lines A:B] [--max-chars N]',
  help: [
    "Searches an artifact with the retrieval tool's pattern (a JavaScript regular",
    "expression, or a plain keyword) and prints the tool's answer followed by a line",
    'break: `[N matches for /PATTERN/]`, then matched lines marked `>` with their',
    'numbers. Exit status: 0 when lines matched, 1 when none did, 2 on errors.',
    'An empty PATTERN with --lines prints that range, as the tool does. REF is a',
    "reference as `ls` shows it, or an opaque id (ref_...) of references: 'opaque' with --session.",
    '',
    'Options:',
    '  --session ID       the session an opaque id was given in',
    '  -C, --context N    lines of context around each match (the tool: context_lines)',
    '  --lines A:B        search only lines A to B (the tool: line_range)',
    '  -F, --fixed-strings  search PATTERN as plain text (the tool does so only when',
    '                     PATTERN is not a valid regular expression; grep refuses those)',
    '  --max-chars N      cut the answer as the tool does at this budget (the tool uses',
    '                     4 x maxResultTokens, 10000 by default); default: no limit',
    ...STORE_HELP,
  ],
  options: {
    ...STORE_OPTIONS,
    session: { type: 'string' },
    context: { type: 'string', short: 'C' },
    'fixed-strings': { type: 'boolean', short: 'F' },
    lines: { type: 'string' },
    'max-chars': { type: 'string' },
  },
  positionals: ['STORE', 'REF', 'PATTERN'],
  async run({ values, positionals: [spec, given, pattern], out }) {
    const range = values.lines === undefined ? undefined : parseLineRange(values.lines)
    const contextLines = values.context === undefined ? undefined : parseCount(values.context, '--context')
    const maxChars = values['max-chars'] === undefined ? UNLIMITED : parseCount(values['max-chars'], '--max-chars', UNLIMITED)
    if (pattern === '' && !range) throw new UsageError('an empty PATTERN needs --lines')
    const opened = openArtifactStore(spec, values)
    const reference = await resolveReference(opened, given, values.session)
    const query = { pattern: searchPattern(pattern, values['fixed-strings']), lineStart: range?.start, lineEnd: range?.end, contextLines }
    let outcome
    try {
      // One search per process: a directory's file is mapped, not read, and nothing is
      // cached (S3 objects are searched as the tool searches them).
      outcome = await (opened.kind === 'file' ? opened.store.searchOnce(reference, query, maxChars) : opened.store.search(reference, query, maxChars))
    } catch (err) {
      throw missingReference(err, given) ?? err
    }
    if (outcome.error != null) throw new UsageError(outcome.error.replace(/^Error: /, ''))
    if (outcome.output == null) throw new UsageError(`${reference} is binary (${outcome.contentType}) and cannot be searched`)
    if (outcome.output.startsWith('Error: ')) throw new UsageError(outcome.output.slice(7))
    out.line(outcome.output)
    return outcome.output.startsWith(NO_MATCHES) || outcome.output === EMPTY ? 1 : 0
  },
}

/**
 * The pattern handed to the search. A pattern that is not a JavaScript regular expression
 * is refused (the tool would quietly search it as text); with `fixed`, a valid one is
 * escaped and an invalid one passed as it is, which the search takes literally.
 */
function searchPattern(pattern, fixed) {
  if (pattern === '') return pattern
  let valid = true
  try {
    new RegExp(pattern)
  } catch (err) {
    if (!fixed) throw new UsageError(`bad pattern: ${oneLine(err)} (-F searches it as plain text)`)
    valid = false
  }
  return fixed && valid ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern
}
