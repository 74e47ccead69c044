// The upstream MCP server as a child process over stdio: started with the proxy's whole
// environment (the SDK's stdio transport passes only a few variables, and users put
// their API keys in the client's `env`), read with the linear reader of
// ./line-transport.js, and closed the way the SDK closes one (stdin, then SIGTERM, then
// SIGKILL). Unlike the SDK's transport it keeps how the child ended, so that calls cut
// short can be answered with an error that names the exit.
import spawn from 'cross-spawn'
import { LineTransport } from './line-transport.js'

/** How long a child has to exit after its stdin closes, and after SIGTERM. */
const GRACE_MS = 2000

/** `exited with code 3`, `was killed by SIGKILL`: how a child ended, for messages. */
export function describeExit(exit) {
  if (!exit) return 'closed its connection'
  if (exit.error) return `could not be started (${exit.error.cause?.message ?? exit.error.message})`
  if (exit.signal) return `was killed by ${exit.signal}`
  return `exited with code ${exit.code}`
}

/** The SDK's `Transport` to a server started as a child process. */
export class ChildProcessTransport {
  #params
  #child
  #lines
  #exited
  /** How the child ended (`{ code, signal }`), once it has. */
  exit = undefined

  /**
   * @param {{ command: string, args?: string[], env?: Record<string, string>, cwd?: string,
   *   stderr?: 'inherit' | 'pipe' | 'ignore', maxMessageBytes?: number }} params
   */
  constructor(params) {
    this.#params = params
    this.onmessage = undefined
    this.onerror = undefined
    this.onclose = undefined
  }

  /** The child's process id, once started. */
  get pid() {
    return this.#child?.pid
  }

  /** The child's stderr when `stderr: 'pipe'`. */
  get stderr() {
    return this.#child?.stderr ?? null
  }

  /** Starts the child; rejects when it cannot be started (no such command, no permission). */
  start() {
    const { command, args = [], env, cwd, stderr = 'inherit', maxMessageBytes } = this.#params
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env: { ...process.env, ...env },
        cwd,
        stdio: ['pipe', 'pipe', stderr],
        shell: false,
        windowsHide: true,
      })
      this.#child = child
      this.#exited = new Promise((done) => {
        child.once('close', (code, signal) => {
          this.exit = { code, signal }
          done()
          this.#lines?.close()
          this.onclose?.()
        })
      })
      child.once('error', (err) => {
        const failure = new Error(`could not start the upstream server '${command}': ${err.message}`, { cause: err })
        if (this.exit === undefined && child.pid === undefined) {
          // Never started: no 'close' follows on every platform, so the close is reported here.
          this.exit = { code: null, signal: null, error: failure }
          reject(failure)
          this.onclose?.()
        } else this.onerror?.(failure)
      })
      // A child that is gone makes writes fail with EPIPE: its exit is reported instead.
      child.stdin.on('error', () => {})
      child.once('spawn', () => {
        const lines = new LineTransport(child.stdout, child.stdin, { maxMessageBytes })
        lines.onmessage = (message) => this.onmessage?.(message)
        lines.onerror = (err) => this.onerror?.(err)
        this.#lines = lines
        lines.start().then(resolve, reject)
      })
    })
  }

  /** Writes one message to the child. */
  async send(message) {
    if (!this.#lines || this.exit) throw new Error(`the upstream server ${describeExit(this.exit)}`)
    await this.#lines.send(message)
  }

  /**
   * Ends the child: closes its stdin, then sends SIGTERM and SIGKILL if it outlives each
   * grace period. Resolves once it has exited.
   */
  async close() {
    const child = this.#child
    if (!child || this.exit) return
    child.stdin.end()
    if (await this.#exitsWithin(GRACE_MS)) return
    child.kill('SIGTERM')
    if (await this.#exitsWithin(GRACE_MS)) return
    child.kill('SIGKILL')
    await this.#exited
  }

  async #exitsWithin(ms) {
    let timer
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), ms)
    })
    const exited = await Promise.race([this.#exited.then(() => true), timeout])
    clearTimeout(timer)
    return exited
  }
}
