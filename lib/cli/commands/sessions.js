// `sessions ls|show|rm`: the session snapshot storages of SessionManager.
import { UsageError } from '../errors.js'
import { createdAt, openSessionSource, sessionsOf } from '../session-sources.js'
import { STORE_HELP, STORE_OPTIONS } from '../stores.js'
import { colourOn, printable, styles, table } from '../terminal.js'
import { isoTime, shortTime } from '../units.js'

export const sessions = {
  name: 'sessions',
  usage: 'sessions (ls DIR_OR_S3 | show DIR_OR_S3 ID | rm DIR_OR_S3 ID) [--json] [--dry-run]',
  help: [
    'Reads the session storage of a SessionManager (a directory of FileStorage /',
    'FileSnapshotStorage, or s3://bucket/prefix of S3Storage / S3SnapshotStorage),',
    "and the snapshots a SessionManager keeps under session/ of an agent's storage",
    '(new Agent({ storage: new FileStorage(DIR), sessionManager }): give DIR).',
    '',
    '  ls DIR_OR_S3       one row per session: scopes, snapshots, time of the latest',
    '  show DIR_OR_S3 ID  one row per scope (agent or multiAgent, and its id)',
    '  rm DIR_OR_S3 ID    removes the session and everything under it',
    '',
    'Snapshots count the snapshot files: the latest and the immutable history. LATEST',
    'is the createdAt of the newest latest snapshot.',
    '',
    'Options:',
    '  --json             ls: one {"session","scopes","snapshots","latest"} per line;',
    '                     show: {"session","scopes":[{"scope","scopeId","snapshots","latest"}]}',
    '  --dry-run          rm: say what would be removed, remove nothing',
    ...STORE_HELP,
  ],
  options: { ...STORE_OPTIONS, json: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
  positionals: ['ls|show|rm', 'DIR_OR_S3', '[ID]'],
  async run({ values, positionals, out }) {
    const [action, spec, id, ...extra] = positionals
    const wanted = { ls: 2, show: 3, rm: 3 }[action]
    if (wanted === undefined) throw new UsageError(`sessions: unknown action '${action ?? ''}' (expected ls, show or rm)`)
    if (positionals.length !== wanted || extra.length > 0) {
      throw new UsageError(`sessions ${action}: expected ${wanted === 2 ? 'DIR_OR_S3' : 'DIR_OR_S3 ID'}`)
    }
    if (id !== undefined && (id === '' || /[/\\]|^\.\.?$/.test(id))) throw new UsageError(`bad session id '${id}'`)
    const source = openSessionSource(spec, values)
    const found = sessionsOf(await source.keys(id))
    const style = styles(colourOn(process.stdout)).bold
    if (action === 'ls') {
      const rows = []
      for (const [session, scopes] of [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const times = await Promise.all([...scopes.values()].map((s) => createdAt(source, s.latestKey)))
        const latest = times.reduce((m, t) => (t != null && (m == null || t > m) ? t : m), null)
        const snapshots = [...scopes.values()].reduce((t, s) => t + s.snapshots, 0)
        rows.push({ session, scopes: scopes.size, snapshots, latest })
      }
      if (values.json) for (const r of rows) out.line(JSON.stringify({ ...r, latest: isoTime(r.latest) }))
      else for (const line of table(['SESSION', 'SCOPES', 'SNAPSHOTS', 'LATEST'], rows.map((r) => [r.session, String(r.scopes), String(r.snapshots), shortTime(r.latest)]), style)) out.line(line)
      return 0
    }
    const scopes = found.get(id)
    if (!scopes) throw new UsageError(`no such session: ${id}`)
    if (action === 'show') {
      const rows = []
      for (const s of scopes.values()) rows.push({ scope: s.scope, scopeId: s.scopeId, snapshots: s.snapshots, latest: await createdAt(source, s.latestKey) })
      if (values.json) out.line(JSON.stringify({ session: id, scopes: rows.map((r) => ({ ...r, latest: isoTime(r.latest) })) }))
      else for (const line of table(['SCOPE', 'ID', 'SNAPSHOTS', 'LATEST'], rows.map((r) => [r.scope, r.scopeId, String(r.snapshots), shortTime(r.latest)]), style)) out.line(line)
      return 0
    }
    const snapshots = [...scopes.values()].reduce((t, s) => t + s.snapshots, 0)
    if (!values['dry-run']) for (const base of new Set([...scopes.values()].map((s) => s.base))) await source.deleteSession(id, base)
    const verb = values['dry-run'] ? 'would remove' : 'removed'
    if (values.json) out.line(JSON.stringify({ dryRun: Boolean(values['dry-run']), session: id, scopes: scopes.size, snapshots }))
    else out.line(`${verb} session ${printable(id)} (${scopes.size} scope${scopes.size === 1 ? '' : 's'}, ${snapshots} snapshot${snapshots === 1 ? '' : 's'})`)
    return 0
  },
}
