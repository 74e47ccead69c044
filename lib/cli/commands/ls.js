// `ls STORE`: one row (or, with --json, one JSON object per line) per artifact.
import { UsageError } from '../errors.js'
import { STORE_HELP, STORE_OPTIONS, openArtifactStore } from '../stores.js'
import { colourOn, styles, table } from '../terminal.js'
import { humanBytes, isoTime, shortTime } from '../units.js'
import { listArtifacts } from '../listing.js'
import { opaqueIds } from '../manifest-ids.js'

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
    '  --json             one JSON object per line: {"reference","id","contentType","bytes",',
    '                     "session","created","expires"} (times ISO 8601 UTC or null)',
    '',
    "ID is the opaque id (ref_...) the plugin gave the artifact with references: 'opaque'",
    '(show and grep take it with --session), or - (null in --json) when it has none.',
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
    const ids = await opaqueIds(opened, new Set(artifacts.map((a) => a.session).filter((s) => s != null)))
    const idOf = (a) => (a.session == null ? undefined : ids.get(a.name))
    if (values.json) {
      for (const a of artifacts) out.line(JSON.stringify(artifactJson(a, idOf(a))))
      return 0
    }
    const rows = artifacts.map((a) => [a.reference, idOf(a) ?? '-', a.contentType, humanBytes(a.bytes), a.session ?? '-', shortTime(a.createdMs), shortTime(a.expiresMs)])
    for (const line of table(['REFERENCE', 'ID', 'TYPE', 'SIZE', 'SESSION', 'CREATED', 'EXPIRES'], rows, styles(colourOn(process.stdout)).bold)) {
      out.line(line)
    }
    return 0
  },
}

/** Whether an artifact's TTL ran out by `now`. */
export function isExpired(artifact, now) {
  return artifact.expiresMs != null && artifact.expiresMs <= now
}

/** The documented `--json` form of one artifact (`id`: its opaque id, if it has one). */
export function artifactJson(a, id) {
  return {
    reference: a.reference,
    id: id ?? null,
    contentType: a.contentType,
    bytes: a.bytes,
    session: a.session ?? null,
    created: isoTime(a.createdMs),
    expires: isoTime(a.expiresMs),
  }
}
