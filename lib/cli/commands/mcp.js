// `mcp [options] -- COMMAND [ARGS...]` (or `--url URL`): the MCP proxy. An MCP server on
// stdio (or Streamable HTTP with `--listen`) that relays a client to an upstream server and
// offloads the upstream's large tool results (see lib/mcp/proxy.js). stdout carries only
// protocol messages; everything else goes to stderr.
import { mkdirSync, statSync } from 'node:fs'
import { UsageError } from '../errors.js'
import { parseS3Url, s3Options } from '../stores.js'
import { parseDuration, parseSize } from '../units.js'

/** The options of `mcp`, with the plugin's names where they exist. */
const OPTIONS = {
  url: { type: 'string' },
  header: { type: 'string', multiple: true },
  listen: { type: 'string' },
  store: { type: 'string' },
  'max-result-tokens': { type: 'string' },
  'preview-tokens': { type: 'string' },
  preview: { type: 'string' },
  tokenizer: { type: 'string' },
  references: { type: 'string' },
  retrieval: { type: 'string' },
  ttl: { type: 'string' },
  'max-bytes': { type: 'string' },
  'never-offload': { type: 'string', multiple: true },
  'offload-errors': { type: 'boolean' },
  'offload-media': { type: 'boolean' },
  'on-storage-error': { type: 'string' },
  timeout: { type: 'string' },
  endpoint: { type: 'string' },
  'path-style': { type: 'boolean' },
  region: { type: 'string' },
}

/** A positive whole number of tokens. */
function parseTokens(text, flag) {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw new UsageError(`${flag}: expected a positive whole number of tokens, got '${text}'`)
  return Number(text)
}

/** One of `choices`. */
function parseChoice(text, flag, choices) {
  if (!choices.includes(text)) throw new UsageError(`${flag}: expected ${choices.join(', ')}; got '${text}'`)
  return text
}

/** Seconds of `--ttl`: a number of seconds, or a duration such as `90s`, `30m`, `12h`, `7d`. */
function parseTtl(text) {
  if (/^\d+(\.\d+)?$/.test(text)) {
    const seconds = Number(text)
    if (seconds > 0) return seconds
  } else {
    const ms = parseDuration(text, '--ttl')
    if (ms > 0) return ms / 1000
  }
  throw new UsageError(`--ttl: expected a positive number of seconds or a duration such as 90s, 30m, 12h, 7d; got '${text}'`)
}

/** `host:port` of `--listen` (`[::1]:3000` for IPv6). */
function parseListen(text) {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(text)
  const port = match ? Number(match[2]) : NaN
  if (!match || port > 65535) throw new UsageError(`--listen: expected host:port (e.g. 127.0.0.1:3000), got '${text}'`)
  return { host: match[1].replace(/^\[|\]$/g, ''), port }
}

/** The storage of `--store` (with `--max-bytes`), loaded only now (the native binding). */
async function storageOf(values) {
  const maxBytes = values['max-bytes'] === undefined ? undefined : parseSize(values['max-bytes'], '--max-bytes')
  if (maxBytes === 0) throw new UsageError('--max-bytes: expected a size above 0')
  const spec = values.store
  if (spec === '') throw new UsageError("--store: expected a directory or s3://bucket/prefix, got ''")
  const { InMemoryStorage, FileStorage, S3Storage } = await import('../../../core.js')
  const memoryFlag = spec === undefined && ['endpoint', 'region', 'path-style'].find((name) => values[name] !== undefined)
  if (memoryFlag) throw new UsageError(`--${memoryFlag}: only for an S3 store (--store s3://bucket/prefix)`)
  // With --ttl, what expired is swept every minute (and answers "expired" at once).
  const sweep = values.ttl !== undefined ? { cleanupIntervalSeconds: 60 } : {}
  if (spec === undefined || spec === ':memory:') return new InMemoryStorage({ evictAfterTurns: null, ...sweep, ...(maxBytes ? { maxBytes } : {}) })
  const s3 = parseS3Url(spec)
  const s3Flag = ['endpoint', 'region', 'path-style'].find((name) => values[name] !== undefined)
  if (!s3 && s3Flag) throw new UsageError(`--${s3Flag}: only for an S3 store (--store s3://bucket/prefix)`)
  if (s3) {
    if (maxBytes) throw new UsageError('--max-bytes: an S3 store has no byte budget (use a bucket lifecycle rule, or --ttl)')
    const { prefix, endpoint, region, forcePathStyle } = s3Options(values, s3.prefix)
    return new S3Storage(s3.bucket, { prefix, endpoint, region, forcePathStyle })
  }
  checkStoreDirectory(spec)
  return new FileStorage({ artifactDir: spec, ...sweep, ...(maxBytes ? { maxBytes } : {}) })
}

/** Fails unless `dir` is a directory or can be made one (a store that cannot hold anything would pass every result whole). */
function checkStoreDirectory(dir) {
  try {
    mkdirSync(dir, { recursive: true })
    if (statSync(dir).isDirectory()) return
  } catch (err) {
    throw new UsageError(`--store: cannot keep results in '${dir}' (${err.code ?? err.message})`)
  }
  throw new UsageError(`--store: '${dir}' is not a directory`)
}

/** The flags of the core's options, for its errors. */
const FLAG_OF = { ttlSeconds: '--ttl', maxResultTokens: '--max-result-tokens', previewTokens: '--preview-tokens', timeoutMs: '--timeout' }

/** An option error of the core as a usage error naming the flag. */
function asUsageError(err) {
  let message = String(err?.message ?? err)
  for (const [name, flag] of Object.entries(FLAG_OF)) message = message.replaceAll(name, flag)
  return new UsageError(message)
}

/** The proxy's options of the command line (everything but the upstream and the storage). */
export function proxyOptionsOf(values) {
  const options = {}
  if (values['max-result-tokens'] !== undefined) options.maxResultTokens = parseTokens(values['max-result-tokens'], '--max-result-tokens')
  if (values['preview-tokens'] !== undefined) options.previewTokens = parseTokens(values['preview-tokens'], '--preview-tokens')
  if (values.preview !== undefined) options.preview = parseChoice(values.preview, '--preview', ['head', 'headTail', 'structure'])
  if (values.tokenizer !== undefined) options.tokenizer = parseChoice(values.tokenizer, '--tokenizer', ['o200k_base', 'cl100k_base', 'heuristic'])
  if (values.references !== undefined) options.references = parseChoice(values.references, '--references', ['opaque', 'paths'])
  if (values.retrieval !== undefined) options.retrieval = parseChoice(values.retrieval, '--retrieval', ['extended', 'sdk'])
  if (values['on-storage-error'] !== undefined) options.onStorageError = parseChoice(values['on-storage-error'], '--on-storage-error', ['keep', 'truncate'])
  if (values.ttl !== undefined) options.ttlSeconds = parseTtl(values.ttl)
  if (values.timeout !== undefined) {
    const ms = /^\d+(\.\d+)?$/.test(values.timeout) ? Number(values.timeout) * 1000 : parseDuration(values.timeout, '--timeout')
    if (!(ms > 0)) throw new UsageError(`--timeout: expected a positive duration such as 30s or 5m, got '${values.timeout}'`)
    options.timeoutMs = Math.min(ms, 2 ** 31 - 1)
  }
  const never = (values['never-offload'] ?? []).flatMap((list) => list.split(',')).map((name) => name.trim()).filter(Boolean)
  if (never.length > 0) options.neverOffload = never
  if (values['offload-errors']) options.offloadErrors = true
  if (values['offload-media']) options.offloadMedia = true
  const maxResult = options.maxResultTokens ?? 2500
  const preview = options.previewTokens ?? 1000
  if (preview >= maxResult) {
    throw new UsageError(`--preview-tokens (${preview}${options.previewTokens === undefined ? ', the default' : ''}) must be below --max-result-tokens (${maxResult}${options.maxResultTokens === undefined ? ', the default' : ''})`)
  }
  return options
}

/** The upstream of the command line: `--url`, or the command after `--`. */
function upstreamOf(values, positionals) {
  if (values.url !== undefined) {
    if (positionals.length > 0) throw new UsageError('give either --url or a command after --, not both')
    if (!/^https?:\/\/\S+$/.test(values.url)) throw new UsageError(`--url: expected an http(s) URL, got '${values.url}'`)
    const headers = {}
    for (const header of values.header ?? []) {
      const colon = header.indexOf(':')
      const name = header.slice(0, colon).trim()
      if (colon < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`--header: expected 'Name: value', got '${header}'`)
      headers[name] = header.slice(colon + 1).trim()
    }
    return { url: values.url, ...(Object.keys(headers).length > 0 ? { headers } : {}) }
  }
  if (values.header !== undefined) throw new UsageError('--header: only with --url (a command gets its settings from its environment)')
  if (positionals.length === 0) throw new UsageError('no upstream server: give its command after -- (e.g. `mcp -- npx -y @modelcontextprotocol/server-filesystem .`) or --url URL')
  return { command: positionals[0], args: positionals.slice(1) }
}

/** Diagnostics: always stderr (stdout is the protocol). */
const log = (message) => process.stderr.write(`context-offloader mcp: ${message}\n`)

/** Runs the proxy on stdio until the client or the upstream goes; resolves with the exit code. */
async function serveStdio(createProxy) {
  const { LineTransport } = await import('../../mcp/line-transport.js')
  const proxy = createProxy()
  // A client gone (EPIPE on stdout) ends the proxy as a closed stdin does: the transport
  // closes, and with it the upstream (the tool's default is to exit at once).
  process.stdout.removeAllListeners('error')
  const transport = new LineTransport(process.stdin, process.stdout, { replyToUnreadable: true })
  // A client that closes stdin still gets the answers to what it asked (`echo ... | mcp`).
  transport.oninputend = () => {
    proxy.whenIdle().then(() => transport.close())
  }
  let signalled = false
  const stop = () => {
    signalled = true
    proxy.close().catch(() => {})
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  await proxy.connect(transport)
  const end = await proxy.upstreamEnded
  process.removeListener('SIGINT', stop)
  process.removeListener('SIGTERM', stop)
  // The client went (closed stdin, a signal): a clean end. The upstream went on its own:
  // its exit status, non-zero when it was killed or its connection dropped.
  if (signalled || end.closedByClient) return 0
  return end.code ?? 1
}

/** Runs the proxy over Streamable HTTP until SIGINT or SIGTERM. */
async function serveHttp(listen, createProxy) {
  const { listenHttp } = await import('../../mcp/http.js')
  const served = await listenHttp({ host: listen.host, port: listen.port, createProxy, log }).catch((err) => {
    throw new UsageError(`--listen: cannot listen on ${listen.host}:${listen.port} (${err.code ?? err.message})`)
  })
  log(`listening on ${served.url}`)
  await new Promise((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await served.close()
  return 0
}

export const mcp = {
  name: 'mcp',
  usage: 'mcp [options] -- COMMAND [ARGS...]   or   mcp [options] --url URL',
  help: [
    'An MCP server that relays a client to an upstream MCP server and offloads its large',
    "tool results: the client gets a preview and references, and a retrieve_offloaded_content",
    'tool reads the rest (grep, line ranges, pages, jq). Everything else passes through.',
    'Serves stdio, or Streamable HTTP at http://HOST:PORT/mcp with --listen.',
    '',
    'Upstream:',
    '  -- COMMAND ARGS    start the upstream server (stdio), with this process\'s environment',
    '  --url URL          connect to an upstream server over Streamable HTTP',
    "  --header 'N: V'    send this header to the --url server (repeatable; e.g. 'Authorization: Bearer ...')",
    '',
    'Options:',
    '  --listen HOST:PORT serve Streamable HTTP (one upstream per session; localhost Host/Origin only)',
    '  --store STORE      where results go: memory (default), a directory, or s3://bucket/prefix',
    '  --max-bytes SIZE   keep the store under SIZE (e.g. 256M): least recently used go first',
    '  --ttl DURATION     lifetime of stored results (seconds, or 90s, 30m, 12h, 7d)',
    '  --max-result-tokens N  results above N tokens are offloaded (default 2500)',
    '  --preview-tokens N tokens of preview the client gets (default 1000)',
    '  --preview MODE     head (default), headTail or structure',
    '  --tokenizer NAME   o200k_base (default), cl100k_base or heuristic (4 chars per token)',
    '  --references KIND  opaque (default: ids scoped to the MCP session) or paths',
    '  --retrieval KIND   extended (default: pages, jq query, list) or sdk',
    '  --never-offload T  tools whose results are never offloaded (comma-separated, repeatable)',
    '  --offload-errors   offload large error results too',
    '  --offload-media    offload large images, audio and binary resources (placeholders stay)',
    '  --on-storage-error keep (default: the whole result) or truncate (the preview only)',
    '  --timeout DURATION answer a call the upstream has not answered within DURATION with an error',
    '  --endpoint URL, --path-style, --region NAME   S3 connection (as for the other commands)',
  ],
  options: OPTIONS,
  positionals: [],
  variadic: true,
  async run({ values, positionals }) {
    // Nothing but protocol on stdout: a stray console.log (ours or a dependency's) goes to stderr.
    for (const method of ['log', 'info', 'debug']) console[method] = (...args) => console.error(...args)
    const upstream = upstreamOf(values, positionals)
    const listen = values.listen === undefined ? undefined : parseListen(values.listen)
    const options = proxyOptionsOf(values)
    const storage = await storageOf(values)
    const { createOffloadingProxy } = await import('../../mcp/proxy.js')
    const createProxy = () => createOffloadingProxy({ upstream, storage, log, ...options })
    // Bad options fail before anything is served.
    try {
      createProxy().close().catch(() => {})
    } catch (err) {
      storage.close?.()
      throw asUsageError(err)
    }
    try {
      return listen ? await serveHttp(listen, createProxy) : await serveStdio(createProxy)
    } finally {
      storage.close?.()
    }
  },
}
