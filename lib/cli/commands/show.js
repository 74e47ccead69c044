// `show STORE REF`: an artifact's content on stdout.
import { UsageError } from '../errors.js'
import { STORE_HELP, STORE_OPTIONS, openArtifactStore } from '../stores.js'
import { parseLineRange } from '../units.js'
import { readArtifact } from '../read.js'
import { resolveReference } from '../manifest-ids.js'

export const show = {
  name: 'show',
  usage: 'show STORE REF [--session ID] [--lines A:B] [--raw]',
  help: [
    "Writes an artifact's content to stdout, as stored. Binary content (images, PDFs, ...)",
    'is written only with --raw or when stdout is not a terminal. REF is a reference',
    "as `ls` shows it, or an opaque id (ref_...) of references: 'opaque' with --session.",
    '',
    'Options:',
    '  --session ID       the session an opaque id was given in',
    '  --lines A:B        only lines A to B (1-based, inclusive; A: runs to the end)',
    '  --raw              write binary content to a terminal too',
    ...STORE_HELP,
  ],
  options: { ...STORE_OPTIONS, session: { type: 'string' }, lines: { type: 'string' }, raw: { type: 'boolean' } },
  positionals: ['STORE', 'REF'],
  async run({ values, positionals: [spec, reference], out }) {
    const range = values.lines === undefined ? undefined : parseLineRange(values.lines)
    const opened = openArtifactStore(spec, values)
    const { content, contentType } = await readArtifact(opened, await resolveReference(opened, reference, values.session))
    const text = isTextType(contentType)
    if (!text && !values.raw && process.stdout.isTTY) {
      throw new UsageError(`${reference} is binary (${contentType}, ${content.length} bytes): use --raw, or redirect stdout`)
    }
    if (range) {
      if (!text) throw new UsageError(`--lines: ${reference} is binary (${contentType})`)
      out.write(linesOf(Buffer.from(content.buffer, content.byteOffset, content.length).toString('utf8'), range))
    } else {
      await out.end()
      process.stdout.write(content)
    }
    return 0
  },
}

/** Whether content of `contentType` is text (shown, searched and sliced by lines). */
export function isTextType(contentType) {
  const type = String(contentType).split(';')[0].trim().toLowerCase()
  return (
    type.startsWith('text/') ||
    /^application\/(json|xml|yaml|x-yaml|javascript|x-ndjson|ndjson|csv|sql|toml)$/.test(type) ||
    /\+(json|xml|yaml)$/.test(type)
  )
}

/** Lines `start` to `end` of `text` (1-based, inclusive), each ending in a line break. */
function linesOf(text, { start, end }) {
  let pos = 0
  for (let line = 1; line < start; line++) {
    const next = text.indexOf('\n', pos)
    if (next < 0) return ''
    pos = next + 1
  }
  let stop = pos
  for (let line = start; line <= end && stop < text.length; line++) {
    const next = text.indexOf('\n', stop)
    stop = next < 0 ? text.length : next + 1
  }
  const slice = text.slice(pos, stop)
  return slice === '' || slice.endsWith('\n') ? slice : `${slice}\n`
}
