// The ContextOffloader plugin (drop-in for the SDK's): its hooks, the offload decision,
// eviction, which storage serves which agent, and the offload pipeline (preview, store,
// replacement text). The pieces it puts together live in their own modules: options
// (./options.js), counting (./counting.js), previews and replacement text (./preview.js),
// block storage (./store-blocks.js), the retrieval tool (./retrieval-tool.js) and its
// answers (./retrieval.js), the offload manifest (./manifest.js), counters and span
// events (./telemetry.js).
import { AfterToolCallEvent, BeforeModelCallEvent, Message, Model, TextBlock, ToolResultBlock } from '@strands-agents/sdk'
import {
  FileStorage as SdkFileStorage,
  InMemoryStorage as SdkInMemoryStorage,
} from '@strands-agents/sdk/vended-plugins/context-offloader'
import { InMemoryStorage as SdkUnifiedInMemoryStorage } from '@strands-agents/sdk/storage'
import { OffloadEngine } from './engine.js'
import { mustYield, waitForTurn } from './native.js'
import { DEFAULT_EVICT_AFTER_CYCLES, resolveOptions } from './options.js'
import { EPHEMERAL_SESSION_PREFIX, opaqueId } from './manifest.js'
import { checkSessionId } from './manifest-keys.js'
import { RETRIEVAL_TOOL_NAME, createRetrievalTool } from './retrieval-tool.js'
import { OFFLOAD_EVENT, traceEvent } from './telemetry.js'
import { isDelegatingAgentTool, isLocalSandbox, logger, OFFLOADER_NAMESPACE, recordingSpan, sandboxOf } from './sdk.js'
import { toContentBlocks, toSdkBlock } from './sdk-blocks.js'
import { FileStorage } from './storage/file.js'
import { InMemoryStorage } from './storage/memory.js'
import { NATIVE, tagged } from './storage/native-backed.js'
import { ttlMs } from './lifecycle.js'
import { isOffloaderStorage, resolveNamespace } from './storage/unified.js'

/**
 * Plugin that offloads oversized tool results (drop-in for the SDK's ContextOffloader).
 *
 * When a tool result exceeds `maxResultTokens` (counted by the agent model's
 * `countTokens`), every content block is stored and the result is replaced with a
 * preview of `previewTokens` tokens plus references; a `retrieve_offloaded_content`
 * tool lets the agent grep or slice what was stored.
 */
/** The SDK's session id of `agent` (its SessionManager's, else a generated one), if any. */
function agentSessionId(agent) {
  try {
    const id = agent?.sessionId
    return typeof id === 'string' && id.length > 0 ? id : undefined
  } catch {
    return undefined
  }
}

/** Whether `agent` keeps its session through a SessionManager. */
function hasSessionManager(agent) {
  try {
    return Boolean(agent?.sessionManager)
  } catch {
    return false
  }
}

/** The manifest session of `offload()` calls made with no agent known (see `_sessionsOf`). */
const DETACHED_SESSION = `${EPHEMERAL_SESSION_PREFIX}no-agent`

/** Manifest sessions of agents without a SessionManager (kept in memory only: a restart starts afresh). */
const LOCAL_SESSIONS = new WeakMap()

/**
 * The session an agent's offloads are recorded under (opaque ids, `list`): its
 * SessionManager's session id, which is what survives a restart; an agent without one
 * gets a session of its own, unguessable and kept in memory (the SDK's generated
 * `agent.sessionId` has 32 random bits and is not meant to be shared).
 */
function sessionOf(agent) {
  const managed = hasSessionManager(agent) ? agentSessionId(agent) : undefined
  if (managed !== undefined) return managed
  if (!agent || typeof agent !== 'object') return DETACHED_SESSION
  let local = LOCAL_SESSIONS.get(agent)
  if (!local) LOCAL_SESSIONS.set(agent, (local = `${EPHEMERAL_SESSION_PREFIX}${opaqueId()}`))
  return local
}

export class ContextOffloader {
  name = 'strands:context-offloader'
  static _DEFAULT_EVICT_AFTER_CYCLES = DEFAULT_EVICT_AFTER_CYCLES
  _storage
  _sandboxableStorage
  _maxResultTokens
  _previewTokens
  _includeRetrievalTool
  _evictAfterCycles
  _storageByAgent = new WeakMap()
  _keyStoredAt = new Map()
  /** The manifest entry (and its session) of each key stored on a unified storage, for `_evict`. */
  _manifestEntryOf = new Map()
  _retrievalTool
  /** Whether `_storage` is the agent's own storage, one of ours (see `initAgent`). */
  _usesAgentStorage = false
  /** The agent the plugin was last added to (for `offload()` without an agent). */
  _lastAgent
  /** The first agent the plugin was added to (it adopts `offload()`s made before any agent). */
  _firstAgent
  /** The per-agent FileStorage view used by `offload()` without any agent. */
  _detachedView
  /** The engine this plugin offloads with (options, counters, manifest, tokenizer; see ./engine.js). */
  _engine

  /** @param {import('../index.d.ts').ContextOffloaderConfig} [config] */
  constructor(config = {}) {
    const options = resolveOptions(config, ContextOffloader._DEFAULT_EVICT_AFTER_CYCLES)
    this._engine = new OffloadEngine(options)
    if (config.storage) this._resolveAndSetStorage(config.storage)
    this._maxResultTokens = options.maxResultTokens
    this._previewTokens = options.previewTokens
    this._includeRetrievalTool = options.includeRetrievalTool
    this._evictAfterCycles = options.evictAfterCycles
  }

  /** The validated options (see ./options.js). */
  get _options() {
    return this._engine.options
  }

  /** Resolves with the native encoding's longest token in bytes (native tokenizers only). */
  get _encodingReady() {
    return this._engine.encodingReady
  }

  _resolveAndSetStorage(storage) {
    this._storage = isOffloaderStorage(storage) ? storage : resolveNamespace(storage, OFFLOADER_NAMESPACE)
    this._engine.storage = this._storage
    this._sandboxableStorage =
      !isOffloaderStorage(this._storage) && 'forSandbox' in this._storage ? this._storage : undefined
  }

  /** Registers the hooks on `agent` (called by the SDK). */
  initAgent(agent) {
    // Without a storage the SDK uses the agent's, else its unified in-memory storage
    // (references are then the bare keys); ours does the same for identical output.
    //
    // When the agent's storage is one of ours (`new Agent({ storage: new FileStorage(dir) })`),
    // it implements both interfaces. The SDK's plugin decides with
    // `'store' in storage && 'retrieve' in storage`, so for that agent it takes the
    // offloader path: it calls `store()`/`retrieve()` on that very instance (no
    // `offloader/` keys, no framing), gives a FileStorage no per-agent view (it only does
    // that for its own FileStorage class), so references are `path.join(dir, file)` numbered
    // by the storage's own counter, and never binds or evicts an InMemoryStorage (it only
    // does that for its own legacy class). We do exactly the same, so the model sees the
    // same references as with the SDK's plugin, and one InMemoryStorage can serve as the
    // storage of several agents, as a unified storage may. Taking the unified path
    // instead would change every reference the model sees (bare keys instead of file
    // paths or `mem_<n>_` names) and break the drop-in promise.
    if (!this._storage) {
      const agentStorage = agent.storage
      this._resolveAndSetStorage(agentStorage ?? new SdkUnifiedInMemoryStorage())
      this._usesAgentStorage = agentStorage !== undefined && agentStorage[NATIVE] !== undefined
    }
    if (this._isLegacyMemoryStorage()) this._storage._bind(agent, this._evictAfterCycles)
    this._storageForAgent(agent)
    this._lastAgent = new WeakRef(agent)
    // The first agent reads what `offload()` stored before any agent was known.
    this._firstAgent ??= new WeakRef(agent)
    agent.addHook(AfterToolCallEvent, (event) => this._handleToolResult(event))
    agent.addHook(BeforeModelCallEvent, () => {
      const cycleCount = agent.metrics.cycleCount
      if (this._isLegacyMemoryStorage()) return this._storage._evict(cycleCount)
      else if (this._evictAfterCycles !== null) this._evict(cycleCount, agent)
    })
  }

  _isLegacyMemoryStorage() {
    if (this._usesAgentStorage) return false
    return this._storage instanceof InMemoryStorage || this._storage instanceof SdkInMemoryStorage
  }

  /** Deletes what a unified storage got more than `evictAfterCycles` cycles ago (the SDK's rule). */
  _evict(currentCycle, agent) {
    const threshold = currentCycle - this._evictAfterCycles
    const toEvict = []
    for (const [key, storedCycle] of this._keyStoredAt) {
      if (storedCycle < threshold) toEvict.push(key)
    }
    if (toEvict.length === 0) return
    const storage = this._storageForAgent(agent)
    const forgotten = new Map()
    for (const key of toEvict) {
      this._keyStoredAt.delete(key)
      storage.delete(key).catch(() => {})
      // The manifest entry of an evicted key goes with it.
      const recorded = this._manifestEntryOf.get(key)
      if (recorded) {
        this._manifestEntryOf.delete(key)
        if (!forgotten.has(recorded.session)) forgotten.set(recorded.session, [])
        forgotten.get(recorded.session).push(recorded.entry)
      }
    }
    for (const [session, entries] of forgotten) this._manifestOf().forget(session, entries).catch(() => {})
    logger.debug(`evicted=<${toEvict.length}>, threshold=<${threshold}> | evicted stale offloaded entries`)
  }

  /**
   * A retrieval of `reference` by `agent`: on a unified storage, where the plugin evicts
   * by the cycle of each key's last use, the key's use moves to the agent's current cycle
   * (the SDK counts only the store). Native in-memory stores count retrievals themselves.
   */
  _used(reference, agent) {
    const last = this._keyStoredAt.get(reference)
    const cycle = agent?.metrics?.cycleCount
    if (last !== undefined && typeof cycle === 'number' && cycle > last) this._keyStoredAt.set(reference, cycle)
  }

  /**
   * The manifest sessions `agent`'s retrieval tool reads: its own (see `sessionOf`); for
   * an agent without a SessionManager also its `sessionId` (what `offload()` recorded with
   * `sessionId: agent.sessionId`); and for the first agent the plugin was added to, the
   * entries of `offload()` calls made before any agent was known.
   */
  _sessionsOf(agent) {
    const sessions = [sessionOf(agent)]
    if (agent && typeof agent === 'object') {
      const own = agentSessionId(agent)
      if (own !== undefined && !hasSessionManager(agent) && !sessions.includes(own)) sessions.push(own)
      if (this._firstAgent?.deref() === agent) sessions.push(DETACHED_SESSION)
    }
    return sessions
  }

  /** The retrieval tool (unless `includeRetrievalTool` is false). */
  getTools() {
    if (!this._includeRetrievalTool) return []
    this._retrievalTool ??= createRetrievalTool({
      extended: this._options.extendedRetrieval,
      retrieval: this._engine.retrieval({
        storageFor: (context) => this._storageForToolContext(context),
        sessionsOf: (context) => this._sessionsOf(context?.agent),
        onUse: (reference, context) => this._used(reference, context?.agent),
      }),
    })
    return [this._retrievalTool]
  }

  /**
   * Counters since the plugin was created: offloads, blocks stored, bytes offloaded,
   * tokens of the offloaded results (`tokensBefore`) and of what replaced them
   * (`tokensAfter`, counted with the configured tokenizer when native, else 4
   * characters per token), tokens kept out of context, retrievals by mode, pages
   * served, and errors (offloads whose storage failed, retrieval answers that are errors).
   */
  stats() {
    return this._engine.counters.snapshot()
  }

  /** The manifest, kept in the plugin's storage when it has a key-value side. */
  _manifestOf() {
    return this._engine.manifestOf()
  }

  /** Whether each agent gets its own storage (sandboxed storages, and file storages as in the SDK). */
  _perAgent() {
    if (this._usesAgentStorage) return false
    return (
      this._sandboxableStorage !== undefined ||
      this._storage instanceof SdkFileStorage ||
      this._storage instanceof FileStorage
    )
  }

  _storageForAgent(agent) {
    if (!this._perAgent()) return this._storage
    if (!agent) {
      // `offload()` before the plugin is added to an agent: a FileStorage needs no sandbox.
      if (this._storage instanceof FileStorage) return (this._detachedView ??= this._storage._pluginView())
      throw new Error('ContextOffloader.offload() needs `agent` for a sandboxed storage')
    }
    let storage = this._storageByAgent.get(agent)
    if (!storage) {
      if (this._sandboxableStorage) storage = this._sandboxableStorage.forSandbox(agent.sandbox)
      else if (this._storage instanceof FileStorage) {
        // The host keeps the native path; a Docker or SSH sandbox gets its files where its tools look.
        const sandbox = sandboxOf(agent)
        storage = isLocalSandbox(sandbox) ? this._storage._pluginView() : this._storage._sandboxView(sandbox)
      }
      else storage = this._storage.forSandbox(agent.sandbox)
      this._storageByAgent.set(agent, storage)
    }
    return storage
  }

  _storageForToolContext(context) {
    if (!this._perAgent()) return this._storage
    if (!context) throw new Error('File-based storage retrieval requires a tool execution context.')
    return this._storageForAgent(context.agent)
  }

  /**
   * Counts a tool result's tokens with the configured tokenizer (the agent model's
   * `countTokens` with `tokenizer: 'model'`) and decides whether it exceeds
   * `maxResultTokens` (see the engine's `decide`).
   */
  _decide(content, resultBlock, agent) {
    const model = this._options.tokenizer === 'model' ? agent?.model : undefined
    // A model whose countTokens is the SDK base class's heuristic is asked nothing: the
    // same heuristic runs in the engine, without building a message (the same count).
    const modelCount =
      model && model.countTokens !== Model.prototype.countTokens
        ? () => model.countTokens([new Message({ role: 'user', content: [resultBlock] })])
        : undefined
    return this._engine.decide(content, modelCount)
  }

  /**
   * Stores every block of `content` under `<keyPrefix>_<i>` and builds the replacement
   * content (the SDK's blocks). Resolves with `null` when storing failed and the
   * original is to be kept.
   */
  _offloadBlocks(content, keyPrefix, agent, decision, tags = {}) {
    const ttl = tags.ttlMs ?? this._options.ttlMs
    let storage
    let storageError
    try {
      // What is stored carries the agent's session (the SDK's `agent.sessionId`) and
      // the lifetime asked for, on storages that keep them (ours).
      storage = tagged(this._storageForAgent(agent), tags.sessionId ?? agentSessionId(agent), ttl)
    } catch (err) {
      storageError = err
    }
    return this._engine.offloadBlocks(content, keyPrefix, decision, {
      storage,
      storageError,
      // Needed only when a manifest is kept.
      session: this._engine.keepsManifest() ? (tags.sessionId ?? sessionOf(agent)) : undefined,
      toolName: tags.toolName ?? keyPrefix,
      ttl,
      agent,
      host: this,
      toBlock: toSdkBlock,
    })
  }

  /** Told by the engine of what a unified storage got: the cycle of each key, for eviction. */
  offloadStored(place, references) {
    const storedAt = place.agent?.metrics?.cycleCount ?? 0
    for (const entry of references) if (entry.ref) this._keyStoredAt.set(entry.storageRef ?? entry.ref, storedAt)
  }

  /** Told by the engine of the manifest entries recorded: on a unified storage, evicted with their keys. */
  offloadRecorded(place, session, entries) {
    if (this._evictAfterCycles === null || isOffloaderStorage(this._storage)) return
    for (const entry of entries) this._manifestEntryOf.set(entry.reference, { session, entry })
  }

  async _handleToolResult(event) {
    if (event.result.status === 'error' && !this._options.offloadErrors) return
    // A delegated agent's result is its final answer: never replace it with a preview.
    if (isDelegatingAgentTool(event.tool)) return
    // The retrieval tool's own results are never offloaded (no circular offloading).
    if (this._includeRetrievalTool && event.toolUse.name === RETRIEVAL_TOOL_NAME) return
    if (this._options.neverOffload.has(event.toolUse.name)) return
    let forced
    if (this._options.shouldOffload) {
      try {
        forced = await this._options.shouldOffload(event.toolUse, event.result)
      } catch (err) {
        logger.warn(`tool_use_id=<${event.result.toolUseId}> | shouldOffload threw, using the size rule`, err)
      }
      if (forced === false) return
    }
    // Offloads of many agents run as one chain of promises: each takes its turn of the
    // event loop, so that timers and I/O run between them. Then the one-pass offload, if
    // it applies, is that turn's one piece of work (whether or not the result waited).
    if (mustYield()) await waitForTurn()
    if (forced === undefined && this._offloadShortText(event)) return
    const content = event.result.content
    const toolUseId = event.result.toolUseId
    const deciding = this._decide(content, event.result, event.agent)
    const decision = deciding instanceof Promise ? await deciding : deciding
    if (!decision.exceeds && forced !== true) return
    // Timed only while the SDK's tracing records (the clock costs most of a microsecond).
    const started = recordingSpan(event.agent) ? performance.now() : undefined
    const offloaded = await this._offloadBlocks(content, toolUseId, event.agent, decision, { toolName: event.toolUse.name })
    if (!offloaded) return
    const { status, error } = event.result
    event.result = new ToolResultBlock({ toolUseId, status, content: offloaded.content, ...(error !== undefined && { error }) })
    if (started !== undefined) this._traceOffload(event.agent, event.toolUse.name, offloaded, performance.now() - started)
  }

  /**
   * Offloads a result that is one short text block through the engine's short path (see
   * `OffloadEngine.offloadShortText`) when it applies: the SDK's heuristic decides (no
   * model of the agent's own counts), and no span records the offload. Returns whether
   * the result is dealt with (offloaded, within the limit, or its store failed).
   */
  _offloadShortText(event) {
    const { result, agent } = event
    const { content } = result
    const block = content.length === 1 ? content[0] : undefined
    if (block?.type !== 'textBlock') return false
    const text = block.text
    if (typeof text !== 'string') return false
    const model = this._options.tokenizer === 'model' ? agent?.model : undefined
    if ((model && model.countTokens !== Model.prototype.countTokens) || this._usesAgentStorage) return false
    const over = this._engine.shortTextOverLimit(text)
    // Within the limit, the result stays as it is (nothing else is looked at).
    if (over !== true) return over === false
    if (recordingSpan(agent)) return false
    let storage
    try {
      storage = tagged(this._storageForAgent(agent), agentSessionId(agent), undefined)
    } catch {
      return false
    }
    const toolUseId = result.toolUseId
    const replacement = this._engine.offloadShortText(text, toolUseId, storage)
    if (replacement === undefined) return false
    if (replacement !== null) {
      const { status, error } = result
      const content = [new TextBlock(replacement)]
      // Literals rather than a spread: cheaper for V8 right after a garbage collection.
      event.result = new ToolResultBlock(error === undefined ? { toolUseId, status, content } : { toolUseId, status, content, error })
    }
    return true
  }

  /** The span event of an offload (when the SDK's tracing is on; nothing is built otherwise). */
  _traceOffload(agent, toolName, offloaded, durationMs) {
    if (!recordingSpan(agent)) return
    traceEvent(agent, OFFLOAD_EVENT, {
      'context_offloader.references': offloaded.references.filter((r) => r.ref).map((r) => r.ref).join(' '),
      'context_offloader.tool_name': toolName,
      'context_offloader.bytes': (offloaded.bytes ?? []).reduce((a, b) => a + b, 0),
      'context_offloader.tokens_before': offloaded.measure.tokens,
      'context_offloader.tokens_after': this._engine.tokensOf(offloaded.text),
      'context_offloader.preview': this._options.previewMode,
      'context_offloader.truncated': offloaded.truncated,
      'context_offloader.duration_ms': durationMs,
    })
  }

  /**
   * Offloads content by hand (large user input, a file the app loaded): stores every
   * block under `<key>_<i>` and returns the preview text and references the plugin
   * would have put in the conversation. Always offloads, whatever the size.
   * @param {string | import('@strands-agents/sdk').ToolResultContent[]} content
   * `ttlSeconds` and `sessionId` override the plugin's lifetime and the agent's session
   * for what this call stores (on storages that keep them: ours).
   * @param {{ key: string, agent?: import('@strands-agents/sdk').LocalAgent, ttlSeconds?: number, sessionId?: string }} options
   */
  async offload(content, options) {
    const key = options?.key
    if (typeof key !== 'string' || key.length === 0) throw new TypeError('offload() needs a non-empty string `key`')
    const tags = {}
    if (options.ttlSeconds !== undefined) tags.ttlMs = ttlMs('ttlSeconds', options.ttlSeconds)
    if (options.toolName !== undefined) {
      if (typeof options.toolName !== 'string') throw new TypeError('offload() toolName must be a string')
      tags.toolName = options.toolName
    }
    if (options.sessionId !== undefined) {
      tags.sessionId = checkSessionId(options.sessionId, 'offload() sessionId')
    }
    if (options.agent !== undefined && (options.agent === null || typeof options.agent !== 'object')) {
      throw new TypeError('offload() agent must be the Agent whose retrieval tool will read the references')
    }
    const blocks = toContentBlocks(content)
    const agent = options.agent ?? this._lastAgent?.deref()
    if (!this._storage) {
      throw new Error(
        'ContextOffloader.offload() needs a storage: pass `storage` in the config or add the plugin to an agent first',
      )
    }
    if (mustYield()) await waitForTurn()
    const resultBlock = new ToolResultBlock({ toolUseId: key, status: 'success', content: blocks })
    const decision = await this._decide(blocks, resultBlock, agent)
    const offloaded = await this._offloadBlocks(blocks, key, agent, decision, tags)
    if (!offloaded) throw new Error(`offload failed: the content could not be stored (key ${key})`)
    const { text, references, measure, truncated } = offloaded
    return {
      text,
      content: offloaded.content,
      references: references.filter((r) => r.ref).map((r) => ({
        reference: r.ref,
        ...(r.storageRef !== undefined && r.storageRef !== r.ref ? { storageReference: r.storageRef } : {}),
        contentType: r.contentType,
        description: r.description,
      })),
      tokens: measure.tokens,
      approximate: measure.approximate,
      truncated,
    }
  }
}
