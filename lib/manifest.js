// What the plugin offloaded, per agent session: one entry per stored block (its
// reference as the model sees it, the storage reference behind it, tool, content type,
// size, tokens, time, first line). It backs opaque references (the model's ids map to
// storage references only within the session that was given them) and the retrieval
// tool's `list`. Entries are kept in the plugin's storage when it has a key-value side
// (ours, and the SDK's unified storages), under `offload-manifest/<session>/`, so they
// survive a restart; otherwise in this process only.
import { randomBytes } from 'node:crypto'
import { isJson } from './content.js'
import { logger } from './sdk.js'
import { MANIFEST_NAMESPACE, OPAQUE_ID, SAMPLE_KEY, entryKey, legacySegment, manifestPrefix, parseEntry, sessionSegment } from './manifest-keys.js'
import { detached } from './strings.js'

export { MANIFEST_NAMESPACE, manifestPrefix }
/** Characters of the first line shown in a manifest line. */
const FIRST_LINE_CHARS = 120
/** Sessions whose entries are held in memory at once (the least recently used go). */
const MAX_SESSIONS = 1024

/**
 * A new opaque reference: `ref_` and 96 random bits (16 URL-safe characters), from the
 * system's cryptographic generator.
 */
export function opaqueId() {
  return `ref_${randomBytes(12).toString('base64url')}`
}

/** The first line of a text, for the manifest (trimmed, at most 120 characters; a string of its own). */
export function firstLineOf(text) {
  const end = text.indexOf('\n')
  const line = (end < 0 ? text : text.slice(0, end)).trim()
  return detached(line.length > FIRST_LINE_CHARS ? `${line.slice(0, FIRST_LINE_CHARS - 1)}…` : line)
}

/** A one-line outline of a JSON value: its type and, for containers, size and first keys. */
export function jsonOutline(value) {
  if (Array.isArray(value)) return `JSON array of ${value.length} items`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
    const shown = keys.slice(0, 8).map((k) => {
      const v = value[k]
      const kind = Array.isArray(v) ? `array[${v.length}]` : v === null ? 'null' : typeof v
      return `${k}: ${kind}`
    })
    return `JSON object {${shown.join(', ')}${keys.length > shown.length ? ', …' : ''}}`
  }
  return `JSON ${value === null ? 'null' : typeof value}`
}

/**
 * The manifest entries of one offload's stored blocks, and its references as the model
 * is to see them: opaque ids (with `storageRef`) or the storage references themselves.
 * A result's token count is shared among its blocks by bytes when there are several.
 * @param {unknown[]} content - the result's blocks
 * @param {Map<number, string>} texts - their texts, by block index
 * @param {{ ref: string, contentType: string }[]} references - one per block (`ref` empty when not stored)
 * @param {number[]} bytes - stored bytes per block
 * @param {{ tokens: number, approximate?: boolean }} measure - the result's token count
 * @param {{ keyPrefix: string, toolName: string, ttl?: number | null, opaque: boolean }} options
 */
export function manifestEntries(content, texts, references, bytes, measure, { keyPrefix, toolName, ttl, opaque }) {
  const created = Date.now()
  const totalBytes = bytes.reduce((a, b) => a + b, 0) || 1
  const one = references.filter((r) => r.ref).length === 1
  const entries = []
  const shown = references.map((r, i) => {
    if (!r.ref) return r
    const id = opaque ? opaqueId() : r.ref
    const text = texts.get(i)
    entries.push({
      id,
      key: `${keyPrefix}_${i}`,
      reference: r.ref,
      tool: toolName,
      contentType: r.contentType,
      bytes: bytes[i],
      tokens: one ? measure.tokens : Math.round((measure.tokens * bytes[i]) / totalBytes),
      approximate: Boolean(measure.approximate) || !one,
      created,
      seq: i,
      expires: ttl == null ? undefined : created + ttl,
      firstLine: isJson(content[i]) ? jsonOutline(content[i].json) : text !== undefined ? firstLineOf(text) : '',
    })
    return { ...r, ref: id, storageRef: r.ref }
  })
  return { entries, shown }
}

/** Manifest entries read from the storage at once. */
const READ_CONCURRENCY = 16
/** Session ids that begin with this are kept in memory only (agents without a SessionManager). */
export const EPHEMERAL_SESSION_PREFIX = '\u0000'

/** An entry as stored: its JSON in UTF-8. */
function encodeEntry(entry) {
  return Buffer.from(JSON.stringify(entry), 'utf8')
}

/**
 * The offload manifest of one plugin. With a storage, entries are written there on
 * every offload and read back from there on every lookup and listing, so every plugin
 * instance and process on that storage sees the same (deleting a session's entries in
 * the storage takes effect at once); sessions of agents without a SessionManager, and
 * every session when there is no storage, are kept in this process's memory.
 */
export class OffloadManifest {
  /** @type {Map<string, Map<string, object>>} entries kept in memory, by session */
  _memory = new Map()
  /** @type {Map<string, object | null>} one entry per persisted session (the shape of a decoy lookup; null: none) */
  _samples = new Map()
  /** @type {object | undefined} a unified storage view (write/read/list), or none */
  _storage
  /** @type {Map<string, Promise<void>>} sessions whose entries of an earlier release were looked for */
  _migrated = new Map()

  /** @type {((references: string[]) => Promise<Array<boolean | null>>) | undefined} which references the store still holds */
  _holds

  /**
   * @param {object | undefined} storage - where entries persist (a unified storage view), if anywhere
   * @param {(references: string[]) => Promise<Array<boolean | null>>} [holds] - for each storage
   *   reference, whether the store holds it now (`false`: gone; `null`: cannot tell), when it can say
   */
  constructor(storage, holds) {
    this._storage = storage
    this._holds = holds
  }

  /** Whether a session's entries live in the storage. */
  _persists(sessionId) {
    return this._storage !== undefined && !sessionId.startsWith(EPHEMERAL_SESSION_PREFIX)
  }

  /** The in-memory entries of a session (the least recently used sessions go past 1,024). */
  _inMemory(sessionId) {
    let entries = this._memory.get(sessionId)
    if (entries) {
      this._memory.delete(sessionId)
    } else {
      entries = new Map()
      if (this._memory.size >= MAX_SESSIONS) this._memory.delete(this._memory.keys().next().value)
    }
    this._memory.set(sessionId, entries)
    return entries
  }

  /** Keeps one entry (or `null`: none) of a persisted session (bounded, like the in-memory sessions). */
  _sample(sessionId, entry) {
    if (!this._samples.has(sessionId) && this._samples.size >= MAX_SESSIONS) {
      this._samples.delete(this._samples.keys().next().value)
    }
    this._samples.set(sessionId, entry)
  }

  /** The keys of a session's entries in the storage (under `segment`, the session's by default). */
  async _entryKeys(sessionId, segment = sessionSegment(sessionId)) {
    const prefix = `${segment}/`
    return (await this._storage.list(prefix))
      .map((key) => (key.startsWith(prefix) ? key : `${prefix}${key}`))
      .filter((key) => key.endsWith('.json'))
  }

  /** The entries the storage holds for a session (none when it cannot be read). */
  async _load(sessionId) {
    try {
      await this._migrate(sessionId)
      const keys = await this._entryKeys(sessionId)
      const entries = []
      for (let i = 0; i < keys.length; i += READ_CONCURRENCY) {
        const read = await Promise.all(keys.slice(i, i + READ_CONCURRENCY).map((key) => this._storage.read(key)))
        for (const data of read) {
          const entry = parseEntry(data)
          if (entry) entries.push(entry)
        }
      }
      return entries
    } catch (err) {
      logger.warn(`session=<${sessionId}> | could not read the offload manifest`, err)
      return []
    }
  }

  /**
   * Moves the entries an earlier release kept under a long session id's spelled-out
   * segment (see `legacySegment`) to the session's segment, once per session and
   * process (a listing of a prefix that is almost always empty).
   */
  _migrate(sessionId) {
    const legacy = legacySegment(sessionId)
    if (legacy === undefined) return undefined
    let done = this._migrated.get(sessionId)
    if (!done) {
      done = (async () => {
        const keys = await this._entryKeys(sessionId, legacy)
        const segment = sessionSegment(sessionId)
        for (const key of keys) {
          const entry = parseEntry(await this._storage.read(key))
          if (entry) await this._storage.write(`${segment}/${entryKey(entry.id)}`, encodeEntry(entry))
          await this._storage.delete(key)
        }
        if (keys.length > 0) await this._storage.prune?.(`${legacy}/`)
      })().catch((err) => logger.warn(`session=<${sessionId}> | could not move the offload manifest of an earlier release`, err))
      if (this._migrated.size >= MAX_SESSIONS) this._migrated.clear()
      this._migrated.set(sessionId, done)
    }
    return done
  }

  /**
   * Records what one offload stored (entries in block order) for a session; persisted
   * when the storage can. Rejects when an entry cannot be persisted (the caller fails
   * the offload: an id whose entry is not stored would never resolve).
   */
  async record(sessionId, entries) {
    if (!this._persists(sessionId)) {
      const kept = this._inMemory(sessionId)
      for (const entry of entries) kept.set(entry.id, entry)
      return
    }
    await this._migrate(sessionId)
    const segment = sessionSegment(sessionId)
    const writes = entries.map((entry) => this._storage.write(`${segment}/${entryKey(entry.id)}`, encodeEntry(entry)))
    // The sample is written by this process's first offload in the session (and by any
    // offload after it was found missing).
    const sample = entries.length > 0 && !this._samples.get(sessionId)
    if (sample) writes.push(this._storage.write(`${segment}/${SAMPLE_KEY}`, encodeEntry(entries[0])))
    const outcomes = await Promise.allSettled(writes)
    const failed = outcomes.find((o) => o.status === 'rejected')
    if (failed) throw failed.reason
    if (sample) this._sample(sessionId, entries[0])
  }

  /**
   * Removes entries recorded by {@link record} (an offload that failed after recording).
   * Best effort: a failure is logged.
   */
  async forget(sessionId, entries) {
    if (!this._persists(sessionId)) {
      const kept = this._memory.get(sessionId)
      for (const entry of entries) kept?.delete(entry.id)
      return
    }
    const segment = sessionSegment(sessionId)
    const outcomes = await Promise.allSettled(entries.map((entry) => this._storage.delete(`${segment}/${entryKey(entry.id)}`)))
    if (outcomes.some((o) => o.status === 'rejected')) logger.warn(`session=<${sessionId}> | could not remove offload manifest entries of a failed offload`)
  }

  /**
   * The entry a session was given under the opaque `id`, if any: one read of the storage
   * for every id of the opaque shape (whether it exists or not), none for other strings.
   */
  async resolve(sessionId, id) {
    if (!this._persists(sessionId)) return this._memory.get(sessionId)?.get(id)
    if (!OPAQUE_ID.test(id)) return undefined
    try {
      const entry = parseEntry(await this._storage.read(`${sessionSegment(sessionId)}/${entryKey(id)}`))
      return entry?.id === id ? entry : undefined
    } catch {
      return undefined
    }
  }

  /**
   * Any entry of a session (to shape a decoy lookup), if it has one. The first call for a
   * session in a process reads its sample (one small read); when there is none (a
   * manifest written before samples existed, or the sample's session was deleted and
   * offloaded to again), the session's keys are listed (names only) and the first entry
   * read, and it becomes the sample. Later calls read nothing. Callers make this call for
   * every id, issued or not, so that its cost tells nothing about the id.
   */
  async anyEntry(sessionId) {
    if (!this._persists(sessionId)) return this._memory.get(sessionId)?.values().next().value
    if (!this._samples.has(sessionId)) {
      await this._migrate(sessionId)
      const segment = sessionSegment(sessionId)
      let sample
      try {
        sample = parseEntry(await this._storage.read(`${segment}/${SAMPLE_KEY}`))
        if (!sample) {
          const [first] = await this._entryKeys(sessionId)
          sample = first === undefined ? undefined : parseEntry(await this._storage.read(first))
          if (sample) await this._storage.write(`${segment}/${SAMPLE_KEY}`, encodeEntry(sample))
        }
      } catch {
        sample = undefined
      }
      // No entry yet is not remembered: the session's first offload records one.
      if (!sample) return undefined
      this._sample(sessionId, sample)
    }
    return this._samples.get(sessionId) ?? undefined
  }

  /**
   * The session's entries, newest first, without those past their expiry at `now` and
   * those whose artifacts the store no longer holds (whatever removed them: a TTL of the
   * storage, the plugin or the offload, a budget, eviction, a sweep, `gc`); the entries
   * of artifacts found gone are removed, and so is a session folder left empty.
   */
  async list(sessionId, now = Date.now()) {
    const persists = this._persists(sessionId)
    let entries = persists ? await this._load(sessionId) : [...(this._memory.get(sessionId)?.values() ?? [])]
    entries = entries.filter((e) => e.expires == null || e.expires > now)
    if (this._holds && entries.length > 0) {
      const states = await this._holds(entries.map((e) => e.reference))
      const gone = entries.filter((_, i) => states[i] === false)
      if (gone.length > 0) {
        entries = entries.filter((_, i) => states[i] !== false)
        await this._drop(sessionId, gone, entries.length === 0)
      }
    }
    return entries.sort((a, b) => b.created - a.created || b.seq - a.seq)
  }

  /**
   * Removes the entries of artifacts that are gone; with `last`, the session has none
   * left, and its sample and folder go too. Best effort: a failure is logged.
   */
  async _drop(sessionId, gone, last) {
    if (!this._persists(sessionId)) {
      const kept = this._memory.get(sessionId)
      for (const entry of gone) kept?.delete(entry.id)
      return
    }
    const segment = sessionSegment(sessionId)
    try {
      for (const entry of gone) await this._storage.delete(`${segment}/${entryKey(entry.id)}`)
      if (last) {
        await this._storage.delete(`${segment}/${SAMPLE_KEY}`)
        this._samples.delete(sessionId)
        await this._storage.prune?.(`${segment}/`)
      }
    } catch (err) {
      logger.warn(`session=<${sessionId}> | could not remove offload manifest entries of artifacts that are gone`, err)
    }
  }
}

/** A size in bytes as the manifest shows it. */
function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}

/** A time as the manifest shows it: UTC, to the second (stable across pages). */
function timeText(ms) {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** The retrieval tool's `list` answer for a session's entries (newest first). */
export function manifestText(entries, now = Date.now()) {
  if (entries.length === 0) return 'Nothing was offloaded in this session (or everything offloaded has expired).'
  const lines = entries.map(
    (e) =>
      `${e.id} | tool: ${e.tool} | ${e.contentType} | ${sizeText(e.bytes)} | ` +
      `${e.approximate ? '~' : ''}${Number(e.tokens).toLocaleString('en-US')} tokens | ${timeText(e.created)}` +
      (e.firstLine ? ` | ${e.firstLine}` : ''),
  )
  return `[Offloaded in this session: ${entries.length}, newest first; times in UTC, now ${timeText(now)}]\n\n${lines.join('\n')}`
}
