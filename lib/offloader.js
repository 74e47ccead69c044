// The framework-neutral core (`context-offloader/core`): `Offloader` decides whether a
// tool result is too large for the context, stores it, and answers with the preview
// text and references that replace it; its `retrievalTool` answers the model's
// retrievals as strings. Framework adapters (AI SDK, LangChain, OpenAI Agents, the MCP
// proxy) sit on top of it; it imports none of them.
import { createHash } from 'node:crypto'
import { getBytes } from './content.js'
import { OffloadEngine } from './engine.js'
import { EPHEMERAL_SESSION_PREFIX, MANIFEST_NAMESPACE, opaqueId } from './manifest.js'
import { checkSessionId, sessionSegment } from './manifest-keys.js'
import { REUSE_RECORD } from './manifest-sweep.js'
import { mustYield, waitForTurn } from './native.js'
import { describe, localeCount } from './numbers.js'
import { CORE_PROFILE, DEFAULT_EVICT_AFTER_CYCLES, resolveOptions } from './options.js'
import { toBlocks, toParts } from './parts.js'
import { RETRIEVAL_TOOL_NAME, EXTENDED_DESCRIPTION, RETRIEVAL_TOOL_DESCRIPTION, checkRetrievalInput, retrievalInputSchema } from './retrieval-schema.js'
import { OFFLOADER_NAMESPACE, logger } from './sdk.js'
import { FileStorage } from './storage/file.js'
import { InMemoryStorage } from './storage/memory.js'
import { nativeFor, tagged } from './storage/native-backed.js'
import { syncClock } from './lifecycle.js'
import { isOffloaderStorage, resolveNamespace, retrieveContent } from './storage/unified.js'

/** What a retrieval of binary content answers in text (a framework's tool answers text). */
function binaryAnswer(block) {
  const bytes = block.source?.bytes?.length ?? 0
  const kind = block.type === 'imageBlock' ? 'image' : block.type === 'videoBlock' ? 'video' : 'document'
  return `[${kind}: ${block.format}, ${localeCount(bytes)} bytes] This content is binary: it cannot be returned as text.`
}

/**
 * The session `reuse` records are kept under for calls with no session and storage
 * references (which any session reads): one name, so that they outlive the offloader.
 */
const SHARED_REUSE_SESSION = '\u0001shared'

/** Offloads remembered in memory for `reuse`, at most (the oldest are forgotten first). */
const MAX_REMEMBERED = 4096

/**
 * The key of one offload for `reuse`: a digest of the options that shape a result, the
 * session, the tool call's id and every block (its kind, media type and file name, and
 * its content: text and JSON text as UTF-16 code units, so that no two strings meet, or
 * bytes), each part digested on its own so that no content can pass for a boundary.
 * The same call with other content, or under other options, is a new offload.
 */
function reuseKey(options, session, toolCallId, blocks) {
  const shape = [
    options.opaqueReferences,
    options.extendedRetrieval,
    options.previewMode,
    options.previewTokens,
    options.headShare,
    options.maxResultTokens,
    options.tokenizer,
    Boolean(options.includeRetrievalTool),
  ]
  const hash = createHash('sha256').update(JSON.stringify([shape, session, toolCallId, blocks.length]))
  for (const block of blocks) {
    const part = createHash('sha256')
    if (block.type === 'textBlock') part.update(block.text, 'utf16le')
    else if (block.type === 'jsonBlock') part.update(JSON.stringify(block.json), 'utf16le')
    else {
      const bytes = getBytes(block)
      if (bytes) part.update(bytes)
      else part.update(JSON.stringify(block.source ?? null), 'utf16le')
    }
    hash.update(JSON.stringify([block.type, block.format ?? null, block.name ?? null, part.digest('base64url')]))
  }
  return hash.digest('base64url')
}

/** Checks a string argument of `offloadResult`. */
function checkName(value, what) {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${what} must be a non-empty string, got ${describe(value)}`)
  return value
}

/**
 * Offloads large tool results for any agent framework. Options have the names and
 * defaults of the Strands plugin's where they apply (`storage`, `maxResultTokens`,
 * `previewTokens`, `tokenizer`, `preview`, `headShare`, `references`, `retrieval`,
 * `ttlSeconds`, `neverOffload`, `shouldOffload`, `onStorageError`, `offloadErrors`,
 * `includeRetrievalTool`, `exactCountLimit`); without a `tokenizer` it counts with the
 * SDK's heuristic (4 characters of text, 2 of compact JSON, per token), since there is
 * no model to ask. Without a `storage` it keeps content in native memory (an
 * `InMemoryStorage`: bound it with `ttlSeconds` or the storage's `maxBytes`).
 */
export class Offloader {
  /** The engine (options, counters, manifest, tokenizer; see ./engine.js). */
  #engine
  /** The storage offloads go to (a FileStorage's view spells references `<dir>/<file>`). */
  #store
  /** The session of calls that name none: this instance's own, kept in memory. */
  #ownSession = `${EPHEMERAL_SESSION_PREFIX}${opaqueId()}`
  #retrievalTool
  #retrieval
  /** Offloads made with `reuse`, by their {@link reuseKey} (in memory). */
  #remembered = new Map()
  /** `reuse` offloads under way, by their key: a re-send made meanwhile waits for the first. */
  #inFlight = new Map()

  /** @param {import('../core.d.ts').OffloaderOptions} [options] */
  constructor(options = {}) {
    const resolved = resolveOptions(options, DEFAULT_EVICT_AFTER_CYCLES, CORE_PROFILE)
    this.#engine = new OffloadEngine(resolved)
    const storage = options.storage ?? new InMemoryStorage()
    const resolvedStorage = isOffloaderStorage(storage) ? storage : resolveNamespace(storage, OFFLOADER_NAMESPACE)
    this.#engine.storage = resolvedStorage
    this.#store = resolvedStorage instanceof FileStorage ? resolvedStorage._pluginView() : resolvedStorage
  }

  /** The storage content is offloaded to. */
  get storage() {
    return this.#engine.storage
  }

  /**
   * Offloads one tool result when it exceeds `maxResultTokens` (or `shouldOffload` says
   * so): stores every block and resolves with the text that replaces it (`text`: the
   * preview and references; `parts`: that text and one placeholder per stored image or
   * file, as content parts), the references, and the result's tokens. Resolves with
   * `null` when the result stays as it is: small enough, an error result (unless
   * `offloadErrors`), a tool in `neverOffload`, the retrieval tool's own answer, or a
   * storage failure with `onStorageError: 'keep'` (logged).
   * @param {import('../core.d.ts').OffloadResultInput} call
   * @returns {Promise<import('../core.d.ts').OffloadedResult | null>}
   */
  async offloadResult(call) {
    if (call === null || typeof call !== 'object') {
      throw new TypeError(`offloadResult() takes { toolName, toolCallId, content, sessionId?, isError? }, got ${describe(call)}`)
    }
    const toolName = checkName(call.toolName, 'offloadResult() toolName')
    const toolCallId = checkName(call.toolCallId, 'offloadResult() toolCallId')
    const session = call.sessionId == null ? this.#ownSession : checkSessionId(call.sessionId, 'offloadResult() sessionId')
    const options = this.#engine.options
    if (call.isError && !options.offloadErrors) return null
    if (toolName === RETRIEVAL_TOOL_NAME || options.neverOffload.has(toolName)) return null
    if (call.content === undefined || call.content === null) return null
    const blocks = toBlocks(call.content)
    let forced
    if (options.shouldOffload) {
      const toolUse = { name: toolName, toolUseId: toolCallId, input: call.input }
      const result = { toolUseId: toolCallId, status: call.isError ? 'error' : 'success', content: call.content }
      try {
        forced = await options.shouldOffload(toolUse, result)
      } catch (err) {
        logger.warn(`tool_use_id=<${toolCallId}> | shouldOffload threw, using the size rule`, err)
      }
      if (forced === false) return null
    }
    // Offloads of many calls take turns of the event loop, so timers and I/O run between them.
    if (mustYield()) await waitForTurn()
    const decision = await this.#engine.decide(blocks)
    if (!decision.exceeds && forced !== true) return null
    if (call.reuse !== true) return this.#storeResult(call, toolName, toolCallId, session, blocks, decision, undefined)
    // Only what is offloaded is digested for reuse (a small result costs no hash). With
    // storage references and no session, what was stored is read from any session: the
    // record is kept under one shared name, so that it outlives this offloader.
    const reuseSession = call.sessionId == null && !options.opaqueReferences ? SHARED_REUSE_SESSION : session
    const reuse = { key: reuseKey(options, reuseSession, toolCallId, blocks), session: reuseSession }
    // Re-sends of one call take turns: the second finds what the first stored.
    const earlier = this.#inFlight.get(reuse.key)
    const turn = (earlier ?? Promise.resolve()).then(
      async () =>
        (await this.#recall(reuse.key, reuse.session, session)) ?? this.#storeResult(call, toolName, toolCallId, session, blocks, decision, reuse),
    )
    const settledTurn = turn.then(
      () => {},
      () => {},
    )
    this.#inFlight.set(reuse.key, settledTurn)
    try {
      return await turn
    } finally {
      if (this.#inFlight.get(reuse.key) === settledTurn) this.#inFlight.delete(reuse.key)
    }
  }

  /**
   * Stores a result the decision offloads and builds what replaces it; `reuse` is the
   * call's reuse key and record session, if any (the result is then remembered).
   */
  async #storeResult(call, toolName, toolCallId, session, blocks, decision, reuse) {
    const ttl = this.#engine.options.ttlMs
    const sessionTag = call.sessionId == null ? undefined : session
    let storage
    let storageError
    try {
      storage = tagged(this.#store, sessionTag, ttl)
    } catch (err) {
      storageError = err
    }
    const offloaded = await this.#engine.offloadBlocks(blocks, toolCallId, decision, { storage, storageError, session, toolName, ttl })
    if (!offloaded) return null
    const { text, references, measure, truncated } = offloaded
    const result = {
      text,
      parts: toParts(offloaded.content),
      references: references
        .filter((r) => r.ref)
        .map((r) => ({
          reference: r.ref,
          ...(r.storageRef !== undefined && r.storageRef !== r.ref ? { storageReference: r.storageRef } : {}),
          contentType: r.contentType,
          description: r.description,
        })),
      tokens: measure.tokens,
      approximate: Boolean(measure.approximate),
      truncated,
    }
    if (reuse !== undefined && !truncated) await this.#remember(reuse.key, reuse.session, result)
    return result
  }

  /** Where offloads made with `reuse` are kept for a session that survives a restart (`undefined`: memory only). */
  #reuseRecords(session) {
    const storage = this.#engine.storage
    if (session.startsWith(EPHEMERAL_SESSION_PREFIX) || typeof storage?.namespace !== 'function') return undefined
    try {
      return storage.namespace(MANIFEST_NAMESPACE)
    } catch {
      return undefined
    }
  }

  /** The key of a `reuse` record: with the session's manifest entries (removed with the session; `list` skips it). */
  static #recordKey(session, key) {
    return `${sessionSegment(session)}/${REUSE_RECORD}${key}`
  }

  /** Remembers an offload made with `reuse`, in memory and, for a lasting session, in the storage. */
  async #remember(key, session, result) {
    if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.delete(this.#remembered.keys().next().value)
    // A copy of its own: what the caller does to the result it got changes no later answer.
    const record = JSON.stringify(result)
    this.#remembered.set(key, JSON.parse(record))
    const records = this.#reuseRecords(session)
    if (!records) return
    try {
      await records.write(Offloader.#recordKey(session, key), Buffer.from(record, 'utf8'))
    } catch (err) {
      // Without the record, a re-send after a restart stores the content again: no loss.
      logger.warn(`tool_use_id=<${result.references[0]?.reference}> | the offload could not be recorded for reuse`, err)
    }
  }

  /**
   * The offload made with `reuse` under `key`, if it is remembered (in memory, else in
   * the storage) and everything it stored can still be read: an expired or evicted
   * block makes it a new offload.
   */
  async #recall(key, recordSession, session) {
    let result = this.#remembered.get(key)
    if (!result) {
      const records = this.#reuseRecords(recordSession)
      try {
        const data = records ? await records.read(Offloader.#recordKey(recordSession, key)) : null
        if (data) result = JSON.parse(Buffer.from(data).toString('utf8'))
      } catch {
        result = undefined
      }
      if (!result || typeof result.text !== 'string' || !Array.isArray(result.references)) return undefined
    }
    if (!Array.isArray(result.parts) || !(await this.#stillHeld(result, session))) {
      this.#remembered.delete(key)
      // What it stored is gone: so goes its record (it holds the preview of that content).
      await this.#reuseRecords(recordSession)?.delete(Offloader.#recordKey(recordSession, key)).catch(() => {})
      return undefined
    }
    this.#remembered.set(key, result)
    return structuredClone(result)
  }

  /** Whether every block an earlier offload stored can still be read through its reference. */
  async #stillHeld(result, session) {
    const { opaqueReferences } = this.#engine.options
    try {
      if (opaqueReferences) {
        const manifest = this.#engine.manifestOf()
        const entries = await Promise.all(result.references.map((r) => manifest.resolve(session, r.reference)))
        if (entries.some((e) => !e)) return false
      }
      const stored = result.references.map((r) => r.storageReference ?? r.reference)
      const nativeStore = nativeFor(this.#store, 'retrieve')
      if (!nativeStore) {
        // A storage of the app's own tells only by being read: every block is read back once.
        for (const reference of stored) await retrieveContent(this.#store, reference)
        return true
      }
      // S3 has no cheap check here (reading back would download every block): the record
      // is trusted; a block removed since answers "not found" when the model asks for it.
      if (typeof nativeStore.holdsAll !== 'function') return true
      syncClock(this.#store, nativeStore)
      return nativeStore.holdsAll(stored)
    } catch {
      return false
    }
  }

  /**
   * The `retrieve_offloaded_content` tool, for any framework: its name, description and
   * JSON Schema input (the Strands plugin's, byte for byte), and `execute(input,
   * { sessionId })`, which answers what the plugin's tool answers, as a string. `null`
   * for an optional field means absent; a malformed input is answered with an error
   * text naming the field, never thrown.
   * @returns {import('../core.d.ts').RetrievalTool}
   */
  get retrievalTool() {
    if (this.#retrievalTool) return this.#retrievalTool
    const extended = this.#engine.options.extendedRetrieval
    this.#retrieval = this.#engine.retrieval({
      storageFor: () => this.#store,
      sessionsOf: (context) => [context?.sessionId ?? this.#ownSession],
      parseJson: false,
    })
    const execute = async (input, context) => {
      let checked
      try {
        checked = checkRetrievalInput(input, extended)
      } catch {
        // An input whose fields cannot be read (a getter that throws, a Proxy).
        return 'Error: invalid input: its fields could not be read'
      }
      if (checked.error) return checked.error
      let sessionId
      try {
        const given = context?.sessionId
        if (given != null) sessionId = checkSessionId(given, 'sessionId')
      } catch (err) {
        return err instanceof TypeError && /^sessionId /.test(err.message) ? `Error: ${err.message}` : 'Error: invalid input: the context could not be read'
      }
      const answer = await this.#retrieval.answer(checked.input, { sessionId })
      return typeof answer === 'string' ? answer : binaryAnswer(answer)
    }
    this.#retrievalTool = Object.freeze({
      name: RETRIEVAL_TOOL_NAME,
      description: extended ? EXTENDED_DESCRIPTION : RETRIEVAL_TOOL_DESCRIPTION,
      inputSchema: retrievalInputSchema(extended),
      execute,
    })
    return this.#retrievalTool
  }

  /**
   * Counters since the offloader was created: offloads, blocks stored, bytes offloaded,
   * tokens before and after, tokens kept out of context, retrievals by mode, pages
   * served, and errors (the plugin's `stats()`).
   */
  stats() {
    return this.#engine.counters.snapshot()
  }
}
