// FileStorage: offloaded blocks as files in one directory with the SDK's file names,
// written crash-safely in Rust, and the SDK's `LocalFileStorage` layout for the unified
// storage interface in the same directory.
import { NAMESPACED, sdkFileStorageClass } from '../sdk.js'
import { asUint8Array, native, toBytes } from '../native.js'
import { checkPathForm, describe } from '../numbers.js'
import { LIFECYCLE_OPTION_NAMES, lifecycleOptions, startLifecycle } from '../lifecycle.js'
import { warnUnknownOptions } from '../option-names.js'
import { NATIVE, NativeBackedStorage, OPENING, PLUGIN_VIEW, SWEEP, kvCall } from './native-backed.js'
import { checkKeyForm, normalizePrefix } from './unified.js'

/** Internal: the artifact directory as given. */
const ARTIFACT_DIR = Symbol('context-offloader.artifactDir')

/**
 * Offloaded content as files in one directory, with the SDK's file names
 * (`<ms>_<n>_<key><ext>`). Each file is written atomically; content types are kept
 * in an append-only journal (and read from the SDK's `.metadata.json`), so they
 * survive restarts and concurrent writers. `retrieve` never reads outside the directory.
 */
export class FileStorage extends NativeBackedStorage {

  /**
   * @param {string | { artifactDir?: string, durable?: boolean, ttlSeconds?: number, maxBytes?: number, dedup?: boolean, cleanupIntervalSeconds?: number, clock?: () => number }} [options='./artifacts']
   *   the directory, or options; `durable: true` fsyncs each file and the directory; the
   *   lifecycle: a default TTL, a byte budget with least-recently-used eviction,
   *   deduplication (hard links to one file), a background sweep, a clock.
   */
  constructor(options = './artifacts') {
    const isOptions = typeof options === 'object' && options !== null
    warnUnknownOptions('FileStorage', options, ['artifactDir', 'durable', ...LIFECYCLE_OPTION_NAMES], {
      sandbox: 'not taken: the plugin stores through the sandbox of each agent whose tools run in one',
    })
    const artifactDir = typeof options === 'string' ? options : (options?.artifactDir ?? './artifacts')
    const durable = isOptions ? (options.durable ?? false) : false
    if (typeof durable !== 'boolean') throw new TypeError(`FileStorage durable must be a boolean, got ${describe(durable)}`)
    if (typeof artifactDir !== 'string' || artifactDir.length === 0) {
      throw new TypeError('FileStorage artifactDir must be a non-empty string')
    }
    checkPathForm(artifactDir, 'FileStorage artifactDir')
    const lifecycle = lifecycleOptions(isOptions ? options : undefined, { budget: true, dedup: true }, 'FileStorage')
    super(native.NativeStore.file(artifactDir, durable), false)
    Object.defineProperty(this, SWEEP, { value: startLifecycle(this, this[NATIVE], lifecycle) })
    // Plain (symbol-keyed) properties, not private fields: agent views inherit them.
    Object.defineProperty(this, ARTIFACT_DIR, { value: artifactDir })
    // The directory is opened (its journal read, on a worker thread) before the first
    // store; results stored meanwhile by any agent wait for that opening (see `storeBlocks`).
    Object.defineProperty(this, OPENING, { value: { pending: undefined } })
  }

  /** The directory artifacts are written to, as given. */
  get artifactDir() {
    return this[ARTIFACT_DIR]
  }

  /**
   * Unified storage: a view rooted at `<dir>/<prefix>`, as the SDK's
   * `LocalFileStorage.namespace` (keys and error messages relative to it; composable).
   * @param {string} prefix
   */
  namespace(prefix) {
    const normalized = normalizePrefix(prefix)
    return fileNamespaceView(this[NATIVE], normalized)
  }

  /**
   * This storage for an agent whose tools run in a sandbox other than the host (Docker,
   * SSH, ...): the SDK's own sandboxed `FileStorage` on the same directory path. Files and
   * `.metadata.json` are written and read through the sandbox, as the SDK's plugin does,
   * so the agent's own tools (bash, file editor) find them at the path the preview names;
   * the retrieval search still runs natively, on the bytes read back.
   * @internal
   */
  _sandboxView(sandbox) {
    const SdkFileStorage = sdkFileStorageClass()
    if (!SdkFileStorage) throw new Error('an agent in a sandbox needs @strands-agents/sdk installed')
    return new SdkFileStorage({ artifactDir: this.artifactDir, sandbox })
  }

  /**
   * This storage as one agent's: its own counter and the SDK plugin's reference form
   * (`<dir>/<file>`), as the SDK's per-agent FileStorage has, over the same open
   * directory (opened, and its journal read, once for every agent). The view inherits
   * from this very instance, so methods a subclass or the instance overrides still run.
   * @internal
   */
  _pluginView() {
    const view = Object.create(this)
    Object.defineProperty(view, NATIVE, { value: this[NATIVE].view() })
    Object.defineProperty(view, PLUGIN_VIEW, { value: true, writable: true })
    return view
  }
}

/**
 * A namespaced view of a native file store: the directory `<dir>/<scope>`, with keys,
 * listings and error messages relative to it (what the SDK's `LocalFileStorage`
 * namespace returns). Confinement and reserved names are checked from the root.
 */
function fileNamespaceView(nativeStore, scope) {
  const view = {
    async write(key, data) {
      checkKeyForm(key, 'key')
      const bytes = toBytes(data)
      await kvCall(() => nativeStore.kvWrite(key, bytes, scope))
    },
    async read(key) {
      checkKeyForm(key, 'key')
      const value = await kvCall(() => nativeStore.kvRead(key, scope))
      return value === null ? null : asUint8Array(value)
    },
    async delete(key) {
      checkKeyForm(key, 'key')
      await kvCall(() => nativeStore.kvDelete(key, scope))
    },
    async list(prefix) {
      checkKeyForm(prefix, 'prefix')
      return kvCall(() => nativeStore.kvList(prefix, scope))
    },
    /** Removes the directory a list prefix names once it is empty (its name may tell what it held). */
    async prune(prefix) {
      checkKeyForm(prefix, 'prefix')
      return kvCall(() => nativeStore.kvPrune(prefix, scope))
    },
    namespace(sub) {
      const normalized = normalizePrefix(sub)
      return fileNamespaceView(nativeStore, normalized ? `${scope}/${normalized}` : scope)
    },
  }
  Object.defineProperty(view, NAMESPACED, { value: true })
  return view
}
