// What the plugin offloaded, per agent session: one entry per stored block (its
// reference as the model sees it, the storage reference behind it, tool, content type,
// size, tokens, time, first line). It backs opaque references (the model's ids map to
// storage references only within the session that was given them) and the retrieval
// tool's `list`. Entries are kept in the plugin's storage when it has a key-value side
// (ours, and the SDK's unified storages), under `offload-manifest/<session>/`, so they
// survive a restart; otherwise in this process only.
import { randomBytes } from 'node:crypto'
import { JsonBlock } from '@strands-agents/sdk'
import { logger } from './sdk.js'
import { MANIFEST_NAMESPACE, manifestPrefix, sessionSegment } from './manifest-keys.js'

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

/** The first line of a text, for the manifest (trimmed, at most 120 characters). */
export function firstLineOf(text) {
  const end = text.indexOf('\n')
  const line = (end < 0 ? text : text.slice(0, end)).trim()
  return line.length > FIRST_LINE_CHARS ? `${line.slice(0, FIRST_LINE_CHARS - 1)}…` : line
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
      firstLine: content[i] instanceof JsonBlock ? jsonOutline(content[i].json) : text !== undefined ? firstLineOf(text) : '',
    })
    return { ...r, ref: id, storageRef: r.ref }
  })
  return { entries, shown }
}

/** The shape of an opaque id (see {@link opaqueId}). */
const OPAQUE_ID = /^ref_[A-Za-z0-9_-]{16}$/
/** Manifest entries read from the storage at once. */
const READ_CONCURRENCY = 16
/** Session ids that begin with this are kept in memory only (agents without a SessionManager). */
export const EPHEMERAL_SESSION_PREFIX = '\u0000'

/** The entries of one JSON text, if it is a manifest entry. */
function parseEntry(data) {
  try {
    const entry = data ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined
    return entry && typeof entry.id === 'string' && typeof entry.reference === 'string' ? entry : undefined
  } catch {
    return undefined
  }
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
  /** @type {Map<string, object>} one entry per persisted session (the shape of a decoy lookup) */
  _samples = new Map()
  /** @type {object | undefined} a unified storage view (write/read/list), or none */
  _storage

  /** @param {object | undefined} storage - where entries persist (a unified storage view), if anywhere */
  constructor(storage) {
    this._storage = storage
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

  /** Keeps one entry of a persisted session (bounded, like the in-memory sessions). */
  _sample(sessionId, entry) {
    if (!this._samples.has(sessionId) && this._samples.size >= MAX_SESSIONS) {
      this._samples.delete(this._samples.keys().next().value)
    }
    this._samples.set(sessionId, entry)
  }

  /** The entries the storage holds for a session (none when it cannot be read). */
  async _load(sessionId) {
    try {
      const prefix = `${sessionSegment(sessionId)}/`
      const keys = await this._storage.list(prefix)
      const entries = []
      for (let i = 0; i < keys.length; i += READ_CONCURRENCY) {
        const batch = keys.slice(i, i + READ_CONCURRENCY)
        const read = await Promise.all(batch.map((key) => this._storage.read(key.startsWith(prefix) ? key : `${prefix}${key}`)))
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
   * Records what one offload stored (entries in block order) for a session; persisted
   * when the storage can. A failure to persist is logged, never thrown: the offload
   * itself succeeded.
   */
  async record(sessionId, entries) {
    if (!this._persists(sessionId)) {
      const kept = this._inMemory(sessionId)
      for (const entry of entries) kept.set(entry.id, entry)
      return
    }
    if (entries.length > 0) this._sample(sessionId, entries[0])
    const segment = sessionSegment(sessionId)
    await Promise.all(
      entries.map((entry) =>
        this._storage
          .write(`${segment}/${entry.id}.json`, new TextEncoder().encode(JSON.stringify(entry)))
          .catch((err) => logger.warn(`session=<${sessionId}> | could not persist an offload manifest entry`, err)),
      ),
    )
  }

  /**
   * The entry a session was given under the opaque `id`, if any: one read of the storage
   * for every id of the opaque shape (whether it exists or not), none for other strings.
   */
  async resolve(sessionId, id) {
    if (!this._persists(sessionId)) return this._memory.get(sessionId)?.get(id)
    if (!OPAQUE_ID.test(id)) return undefined
    try {
      const entry = parseEntry(await this._storage.read(`${sessionSegment(sessionId)}/${id}.json`))
      return entry?.id === id ? entry : undefined
    } catch {
      return undefined
    }
  }

  /** Any entry of a session (to shape a decoy lookup), if it has one. */
  async anyEntry(sessionId) {
    if (!this._persists(sessionId)) return this._memory.get(sessionId)?.values().next().value
    if (!this._samples.has(sessionId)) {
      const [first] = await this._load(sessionId)
      if (first) this._sample(sessionId, first)
    }
    return this._samples.get(sessionId)
  }

  /** The session's entries, newest first, without those past their expiry at `now`. */
  async list(sessionId, now = Date.now()) {
    const entries = this._persists(sessionId) ? await this._load(sessionId) : [...(this._memory.get(sessionId)?.values() ?? [])]
    return entries
      .filter((e) => e.expires == null || e.expires > now)
      .sort((a, b) => b.created - a.created || b.seq - a.seq)
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
