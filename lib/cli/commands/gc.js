// `gc STORE`: removes artifacts by expiry, session, age or a byte budget, safely while
// agents write to the store.
import { legacyManifestPrefix, manifestPrefix } from '../../manifest-keys.js'
import { UsageError } from '../errors.js'
import { listArtifacts, removeArtifacts } from '../listing.js'
import { STORE_HELP, STORE_OPTIONS, openArtifactStore } from '../stores.js'
import { printable } from '../terminal.js'
import { humanBytes, parseDuration, parseSize } from '../units.js'
import { isExpired } from './ls.js'

/** `--max-bytes` never removes artifacts younger than this (a writer may have just published them). */
export const MAX_BYTES_GRACE_MS = 60_000

export const gc = {
  name: 'gc',
  usage: 'gc STORE (--expired | --session ID | --older-than 7d | --max-bytes 1G) [--dry-run] [--json]',
  help: [
    'Removes artifacts, and prints each one it removed (or, with --dry-run, would remove)',
    'and a total. Exactly one selector:',
    '',
    '  --expired          artifacts whose TTL ran out; each TTL is checked again at the',
    '                     moment of removal',
    '  --session ID       every artifact of the session, and its offload manifest',
    '  --older-than AGE   artifacts created more than AGE ago (90s, 30m, 12h, 7d, 2w)',
    '  --max-bytes SIZE   expired artifacts first, then the oldest, until the store holds',
    '                     at most SIZE (K, M, G, T: powers of 1024); artifacts younger',
    `                     than ${MAX_BYTES_GRACE_MS / 1000} s are never removed`,
    '',
    'Safe while agents write: only artifacts listed when gc starts are considered, so what',
    'a writer publishes meanwhile stays, and removals go through the store as its own',
    'sweeps do (the journal of a directory, DeleteObjects on S3).',
    '',
    'Options:',
    '  --dry-run          print what would be removed, remove nothing',
    '  --json             {"dryRun","selected","removed","bytes","references":[...]};',
    '                     with --max-bytes also "maxBytes","keptBytes","reached"',
    '',
    'When --max-bytes cannot reach its target (what stays is too young to remove), it',
    'says so and why: cannot reach 10M: 19.7 MiB kept (19.7 MiB younger than 60 s).',
    ...STORE_HELP,
  ],
  options: {
    ...STORE_OPTIONS,
    expired: { type: 'boolean' },
    session: { type: 'string' },
    'older-than': { type: 'string' },
    'max-bytes': { type: 'string' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  positionals: ['STORE'],
  async run({ values, positionals: [spec], out }) {
    const selectors = ['expired', 'session', 'older-than', 'max-bytes'].filter((k) => values[k] !== undefined)
    if (selectors.length !== 1) {
      throw new UsageError(`gc needs exactly one of --expired, --session, --older-than, --max-bytes${selectors.length ? ` (got --${selectors.join(', --')})` : ''}`)
    }
    if (values.session === '') throw new UsageError('--session: expected a session id')
    const olderThan = values['older-than'] === undefined ? undefined : parseDuration(values['older-than'], '--older-than')
    const maxBytes = values['max-bytes'] === undefined ? undefined : parseSize(values['max-bytes'], '--max-bytes')
    if (maxBytes === 0) throw new UsageError(`--max-bytes: bad size '${values['max-bytes']}' (expected a positive size, e.g. 1G; --older-than or --session remove everything old or of a session)`)
    const opened = openArtifactStore(spec, values)
    const now = Date.now()
    // The session's manifest entries are listed before its artifacts, so that an entry a
    // writer adds meanwhile (for an artifact gc does not see) is left alone too.
    const prefixes = values.session === undefined ? [] : [manifestPrefix(values.session), legacyManifestPrefix(values.session)].filter(Boolean)
    const manifest = values['dry-run'] ? [] : (await Promise.all(prefixes.map((prefix) => opened.store.kvList(prefix)))).flat()
    const all = await listArtifacts(opened)
    let selected
    let budget
    if (values.expired) selected = all.filter((a) => isExpired(a, now))
    else if (values.session !== undefined) selected = all.filter((a) => a.session === values.session)
    else if (olderThan !== undefined) selected = all.filter((a) => a.createdMs != null && a.createdMs < now - olderThan)
    else ({ selected, budget } = overBudget(all, maxBytes, now))
    const bytes = selected.reduce((t, a) => t + a.bytes, 0)
    let removed = 0
    if (!values['dry-run']) {
      removed = await removeArtifacts(opened, selected, values.expired ? now : null)
      for (const key of manifest) await opened.store.kvDelete(key)
      // The session's manifest directory would tell its id: it goes once empty.
      if (manifest.length > 0 && typeof opened.store.kvPrune === 'function') for (const prefix of prefixes) await opened.store.kvPrune(prefix)
    }
    if (values.json) {
      const result = { dryRun: Boolean(values['dry-run']), selected: selected.length, removed, bytes, references: selected.map((a) => a.reference) }
      if (budget) Object.assign(result, { maxBytes, keptBytes: budget.kept, reached: budget.kept <= maxBytes })
      out.line(JSON.stringify(result))
      return 0
    }
    const verb = values['dry-run'] ? 'would remove' : 'removed'
    for (const a of selected) out.line(`${verb} ${printable(a.reference)} (${humanBytes(a.bytes)})`)
    const count = values['dry-run'] ? selected.length : removed
    const others = !values['dry-run'] && removed < selected.length ? `; ${selected.length - removed} were gone already or no longer qualified` : ''
    out.line(`${verb} ${count} artifact${count === 1 ? '' : 's'}, ${humanBytes(bytes)} selected${others}`)
    if (budget && budget.kept > maxBytes) out.line(unreachedLine(values['max-bytes'], budget))
    return 0
  },
}

/**
 * Why `--max-bytes` cannot bring the store down to its target: what stays, and that it
 * is too young to remove (or of unknown age).
 * @param {string} target - the size as the user wrote it
 * @param {{ kept: number, young: number, unknownAge: number }} budget
 */
function unreachedLine(target, { kept, young, unknownAge }) {
  const reasons = []
  if (young > 0) reasons.push(`${humanBytes(young)} younger than ${MAX_BYTES_GRACE_MS / 1000} s`)
  if (unknownAge > 0) reasons.push(`${humanBytes(unknownAge)} of unknown age`)
  return `cannot reach ${target}: ${humanBytes(kept)} kept (${reasons.join(', ')})`
}

/**
 * What `--max-bytes` removes: expired artifacts first, then the oldest, until the live
 * bytes fit; never anything younger than {@link MAX_BYTES_GRACE_MS}. Also what stays:
 * its bytes (`kept`), and of those the bytes passed over as too young (`young`) or of
 * unknown age (`unknownAge`), which say why the target was not reached when it was not.
 */
function overBudget(all, maxBytes, now) {
  let total = all.reduce((t, a) => t + a.bytes, 0)
  const order = [...all.filter((a) => isExpired(a, now)), ...all.filter((a) => !isExpired(a, now))]
  const selected = []
  let young = 0
  let unknownAge = 0
  for (const a of order) {
    if (total <= maxBytes) break
    if (!isExpired(a, now) && a.createdMs == null) {
      unknownAge += a.bytes
      continue
    }
    if (!isExpired(a, now) && a.createdMs > now - MAX_BYTES_GRACE_MS) {
      young += a.bytes
      continue
    }
    selected.push(a)
    total -= a.bytes
  }
  return { selected, budget: { kept: total, young, unknownAge } }
}
