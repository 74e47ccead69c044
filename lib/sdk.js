// Everything this package takes from @strands-agents/sdk beyond its public exports, in
// one place: modules reached by path inside the SDK's `dist/src/` (its logger,
// `AgentAsTool`, `SessionError`), the global symbols its unified storages carry, and the
// internal formats ours must match byte for byte (how its plugin frames blocks in a
// unified storage, and under which namespace).
//
// Checked against the SDK version below. When the SDK changes, this is the file to read:
// a missing internal module degrades to the fallbacks here, never to a failed import.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The SDK release these internals were checked against. */
export const SDK_VERSION_CHECKED = '1.19.0'

const require = createRequire(import.meta.url)

/** The URL of the installed SDK's entry (its `dist/src/` holds the internals), or `undefined`. */
const sdkEntry = (() => {
  try {
    return import.meta.resolve('@strands-agents/sdk')
  } catch {
    return undefined
  }
})()

/**
 * Loads a module of the installed SDK that its package exports do not expose (best
 * effort), synchronously, so that loading this package never waits (no top-level
 * await: `require('context-offloader')` works). The SDK's modules are ES modules: they
 * load here through `require()` of ES modules (Node >= 20.19 / 22.12), as the instances
 * the SDK itself uses. On a Node without it the module is imported asynchronously and
 * handed to `assign` when it arrives; the fallbacks below serve until then.
 * @param {string} relativePath - relative to the SDK's `dist/src/`
 * @param {(module: any) => void} assign
 */
function sdkInternal(relativePath, assign) {
  if (sdkEntry === undefined) return undefined
  const url = new URL(relativePath, sdkEntry)
  try {
    return require(fileURLToPath(url))
  } catch {
    import(url.href).then(assign, () => {})
    return undefined
  }
}

let sdkLogging = sdkInternal('./logging/logger.js', (m) => (sdkLogging = m))
let sdkAgentAsTool = sdkInternal('./agent/agent-as-tool.js', (m) => (sdkAgentAsTool = m))
let sdkLocalSandbox = sdkInternal('./sandbox/not-a-sandbox-local-environment.js', (m) => (sdkLocalSandbox = m))
const sdkErrors = sdkInternal('./errors.js', (m) => {
  if (m?.SessionError) SessionError = m.SessionError
  if (m?.StorageError) StorageError = m.StorageError
})

/** The OpenTelemetry API the SDK traces with (its optional peer), resolved from the SDK; absent when not installed. */
const otelApi = (() => {
  try {
    return createRequire(sdkEntry)('@opentelemetry/api')
  } catch {
    return undefined
  }
})()

/**
 * Where the OpenTelemetry API the SDK resolves keeps its global registrations
 * (`Symbol.for('opentelemetry.js.api.<major>')`), or `undefined` when its version cannot
 * be read. Without a context manager registered there, no span is ever active.
 */
const otelRegistry = (() => {
  try {
    const main = createRequire(sdkEntry).resolve('@opentelemetry/api')
    const root = main.slice(0, main.lastIndexOf(`${sep}build${sep}`))
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    const major = /^(\d+)\./.exec(version)?.[1]
    return major === undefined ? undefined : Symbol.for(`opentelemetry.js.api.${major}`)
  } catch {
    return undefined
  }
})()

/**
 * The span the SDK is recording for `agent` right now, or `undefined` when its tracing
 * is off (no OpenTelemetry provider registered) or nothing is being recorded: the
 * active span (inside a tool call, the tool's `execute_tool` span), else the agent's
 * current loop-cycle span (after a tool call, when the tool's span has ended; read from
 * the SDK tracer's internal `_loopSpan`).
 */
export function recordingSpan(agent) {
  try {
    // Asking the API costs several cold calls after a garbage collection; with no
    // context manager registered its answer is known.
    const active = otelRegistry !== undefined && globalThis[otelRegistry]?.context === undefined ? undefined : otelApi?.trace?.getActiveSpan?.()
    if (active?.isRecording?.()) return active
    const loop = agent?._tracer?._loopSpan
    return loop?.isRecording?.() ? loop : undefined
  } catch {
    return undefined
  }
}

/** The SDK's logger (honours `configureLogging`), or the SDK's default behaviour. */
export const logger = {
  debug: (...args) => sdkLogging?.logger?.debug?.(...args),
  warn: (...args) => (sdkLogging?.logger ? sdkLogging.logger.warn(...args) : console.warn(...args)),
}

/** Whether a tool is an agent used as a delegate (its result is the final answer). */
export function isDelegatingAgentTool(candidate) {
  if (!candidate || !candidate.delegate) return false
  const AgentAsTool = sdkAgentAsTool?.AgentAsTool
  return AgentAsTool ? candidate instanceof AgentAsTool : candidate.constructor?.name === 'AgentAsTool'
}

/**
 * The sandbox an agent's tools run in, or `undefined` when none is configured (the
 * SDK's `agent.sandbox` getter throws then).
 */
export function sandboxOf(agent) {
  try {
    return agent?.sandbox
  } catch {
    return undefined
  }
}

/** Whether a sandbox is the host itself (the SDK's default), or none. */
export function isLocalSandbox(sandbox) {
  if (sandbox === undefined || sandbox === null) return true
  const Local = sdkLocalSandbox?.NotASandboxLocalEnvironment
  return Local ? sandbox instanceof Local : sandbox.constructor?.name === 'NotASandboxLocalEnvironment'
}

/** An error class named `name`, standing in for the SDK's when the SDK is not loaded. */
function errorLookAlike(name) {
  const LookAlike = class extends Error {
    constructor(message, options) {
      super(message, options)
      this.name = name
    }
  }
  Object.defineProperty(LookAlike, 'name', { value: name })
  return LookAlike
}

/** The SDK's `SessionError` (not exported by its entry point), or a look-alike. */
export let SessionError = sdkErrors?.SessionError ?? errorLookAlike('SessionError')

/**
 * The SDK's `StorageError` (the class its entry point exports) when the SDK is
 * installed, else a look-alike: the storages throw it without the SDK being loaded.
 */
export let StorageError = sdkErrors?.StorageError ?? errorLookAlike('StorageError')

/**
 * The SDK's own sandboxed offloader `FileStorage` class, loaded when first asked for (only
 * agents whose tools run in a sandbox need it); `undefined` without the SDK.
 */
export function sdkFileStorageClass() {
  if (sdkEntry === undefined) return undefined
  try {
    return createRequire(sdkEntry)('@strands-agents/sdk/vended-plugins/context-offloader').FileStorage
  } catch {
    return undefined
  }
}

/** Marks a unified storage view as already namespaced (registered globally by the SDK). */
export const NAMESPACED = Symbol.for('strands.storage.namespaced')
/** Marks a unified storage whose content does not survive a restart. */
export const EPHEMERAL = Symbol.for('strands.storage.ephemeral')

/** The namespace the SDK's plugin stores blocks under in a unified storage. */
export const OFFLOADER_NAMESPACE = 'offloader'

/** The SDK plugin's framing of a block in a unified storage: [u16 BE type length][type][content]. */
export function frameContent(content, contentType) {
  const ctBytes = new TextEncoder().encode(contentType)
  const frame = new Uint8Array(2 + ctBytes.length + content.length)
  frame[0] = (ctBytes.length >> 8) & 0xff
  frame[1] = ctBytes.length & 0xff
  frame.set(ctBytes, 2)
  frame.set(content, 2 + ctBytes.length)
  return frame
}

/** The inverse of {@link frameContent}. */
export function unframeContent(frame) {
  const ctLen = (frame[0] << 8) | frame[1]
  const contentType = new TextDecoder().decode(frame.subarray(2, 2 + ctLen))
  const content = frame.subarray(2 + ctLen)
  return { content, contentType }
}
