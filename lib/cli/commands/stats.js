// `stats STORE`: artifacts and bytes, overall and per session.
import { STORE_HELP, STORE_OPTIONS, openArtifactStore } from '../stores.js'
import { colourOn, styles, table } from '../terminal.js'
import { humanBytes } from '../units.js'

export const stats = {
  name: 'stats',
  usage: 'stats STORE [--json]',
  help: [
    'Counts the live (unexpired) artifacts of a store and their bytes, overall and per',
    'session. storedBytes counts identical content once where the store deduplicates.',
    '',
    'Options:',
    '  --json             {"artifacts","bytes","storedBytes","sessions":{"<id>":{"artifacts","bytes"}}}',
    ...STORE_HELP,
  ],
  options: { ...STORE_OPTIONS, json: { type: 'boolean' } },
  positionals: ['STORE'],
  async run({ values, positionals: [spec], out }) {
    const opened = openArtifactStore(spec, values)
    const s = await opened.store.stats()
    const sessions = Object.fromEntries(
      Object.keys(s.sessions)
        .sort()
        .map((id) => [id, { artifacts: s.sessions[id].artifacts, bytes: s.sessions[id].bytes }]),
    )
    if (values.json) {
      out.line(JSON.stringify({ artifacts: s.artifacts, bytes: s.bytes, storedBytes: s.storedBytes, sessions }))
      return 0
    }
    const inSessions = Object.values(sessions).reduce((t, x) => ({ artifacts: t.artifacts + x.artifacts, bytes: t.bytes + x.bytes }), { artifacts: 0, bytes: 0 })
    const rows = [
      ['(all)', String(s.artifacts), humanBytes(s.bytes)],
      ...Object.entries(sessions).map(([id, x]) => [id, String(x.artifacts), humanBytes(x.bytes)]),
    ]
    if (inSessions.artifacts < s.artifacts) rows.push(['(no session)', String(s.artifacts - inSessions.artifacts), humanBytes(s.bytes - inSessions.bytes)])
    for (const line of table(['SESSION', 'ARTIFACTS', 'SIZE'], rows, styles(colourOn(process.stdout)).bold)) out.line(line)
    if (s.storedBytes !== s.bytes) out.line(`stored after deduplication: ${humanBytes(s.storedBytes)}`)
    return 0
  },
}
