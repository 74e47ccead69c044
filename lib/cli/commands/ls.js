// `ls STORE`: one row (or, with --json, one JSON object per line) per artifact.
import { UsageError } from '../errors.js'
import { STORE_HELP, STORE_OPTIONS, openArtifactStore } from '../stores.js'
import { colourOn, styles, table } from '../terminal.js'
import { humanBytes, isoTime, shortTime } from '../units.js'
import { listArtifacts } from '../listing.js'

export const ls = {
  name: 'ls',
  usage: 'ls STORE [--session ID] [--expired] [--json]',
  help: [
    'Lists the artifacts of a store, oldest first. Expired artifacts that no sweep has',
    'removed yet are left out; --expired lists only them.',
    '',
    'Options:',
    '  --session ID       only the artifacts of this session',
    '  --expired          only artifacts whose TTL ran out (what `gc --expired` removes)',
    '  --json             one JSON object per line: {"reference","contentType","bytes",',
    '                     "session","created","expires"} (times ISO 8601 UTC or null)',
    ...STORE_HELP,
  ],
  options: { ...STORE_OPTIONS, session: { type: 'string' }, expired: { type: 'boolean' }, json: { type: 'boolean' } },
  positionals: ['STORE'],
  async run({ values, positionals: [spec], out }) {
    if (values.session === '') throw new UsageError('--session: expected a session id')
    const opened = openArtifactStore(spec, values)
    const now = Date.now()
    const artifacts = (await listArtifacts(opened)).filter(
      (a) => (values.session === undefined || a.session === values.session) && isExpired(a, now) === Boolean(values.expired),
    )
    if (values.json) {
      for (const a of artifacts) out.line(JSON.stringify(artifactJson(a)))
      return 0
    }
    const rows = artifacts.map((a) => [a.reference, a.contentType, humanBytes(a.bytes), a.session ?? '-', shortTime(a.createdMs), shortTime(a.expiresMs)])
    for (const line of table(['REFERENCE', 'TYPE', 'SIZE', 'SESSION', 'CREATED', 'EXPIRES'], rows, styles(colourOn(process.stdout)).bold)) {
      out.line(line)
    }
    return 0
  },
}

/** Whether an artifact's TTL ran out by `now`. */
export function isExpired(artifact, now) {
  return artifact.expiresMs != null && artifact.expiresMs <= now
}

/** The documented `--json` form of one artifact. */
export function artifactJson(a) {
  return {
    reference: a.reference,
    contentType: a.contentType,
    bytes: a.bytes,
    session: a.session ?? null,
    created: isoTime(a.createdMs),
    expires: isoTime(a.expiresMs),
  }
}
