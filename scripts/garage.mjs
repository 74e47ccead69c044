// Starts a throwaway single-node Garage (S3-compatible server) on 127.0.0.1 for tests
// and benchmarks. `node scripts/garage.mjs ensure` installs Garage with cargo when it
// is missing; `node scripts/garage.mjs start` runs one until interrupted.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const BIN_NAME = process.platform === 'win32' ? 'garage.exe' : 'garage'

/** The garage binary: on PATH or in ~/.cargo/bin; `undefined` when neither has it. */
export function findGarage() {
  const onPath = spawnSync(BIN_NAME, ['--version'], { encoding: 'utf8' })
  if (onPath.status === 0) return BIN_NAME
  const cargoBin = join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'bin', BIN_NAME)
  return existsSync(cargoBin) ? cargoBin : undefined
}

/** Installs Garage with `cargo install garage --locked` unless it is already there. */
export function ensureGarage() {
  const found = findGarage()
  if (found) return found
  const result = spawnSync('cargo', ['install', 'garage', '--locked'], { stdio: 'inherit' })
  if (result.status !== 0) throw new Error(`cargo install garage failed (exit ${result.status})`)
  const installed = findGarage()
  if (!installed) throw new Error('cargo install garage succeeded but no garage binary was found')
  return installed
}

/** A free TCP port on 127.0.0.1 (picked by the kernel at random). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function portAnswers(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Whether the S3 API serves requests (an anonymous request is refused with a 4xx then). */
async function s3Answers(endpoint) {
  try {
    const response = await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(2_000) })
    await response.arrayBuffer()
    return response.status < 500
  } catch {
    return false
  }
}

async function waitFor(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  let lastError
  while (Date.now() < deadline) {
    try {
      const value = await check()
      if (value) return value
    } catch (err) {
      lastError = err
    }
    await sleep(100)
  }
  throw new Error(`garage: timed out waiting for ${what}${lastError ? `: ${lastError.message}` : ''}`)
}

/**
 * Starts Garage in a fresh temporary directory with one bucket and one key.
 * Resolves with the S3 connection details plus `stop()` (kills the server and removes
 * the directory), `halt()` (kills the server, keeps its data) and `restart()` (starts
 * it again on the same ports and data after `halt()`).
 */
export async function startGarage({ bucket = 'test-bucket', keyName = 'test-key' } = {}) {
  const bin = findGarage()
  if (!bin) throw new Error('garage is not installed: run `node scripts/garage.mjs ensure`')
  const dir = mkdtempSync(join(tmpdir(), 'co-garage-'))
  const [rpcPort, s3Port, adminPort] = [await freePort(), await freePort(), await freePort()]
  const configFile = join(dir, 'garage.toml')
  writeFileSync(
    configFile,
    [
      `metadata_dir = "${join(dir, 'meta')}"`,
      `data_dir = "${join(dir, 'data')}"`,
      'db_engine = "sqlite"',
      'replication_factor = 1',
      `rpc_bind_addr = "127.0.0.1:${rpcPort}"`,
      `rpc_public_addr = "127.0.0.1:${rpcPort}"`,
      `rpc_secret = "${randomBytes(32).toString('hex')}"`,
      '',
      '[s3_api]',
      's3_region = "garage"',
      `api_bind_addr = "127.0.0.1:${s3Port}"`,
      'root_domain = ".s3.garage.localhost"',
      '',
      '[admin]',
      `api_bind_addr = "127.0.0.1:${adminPort}"`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  )
  const cli = (...args) =>
    execFileSync(bin, ['-c', configFile, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

  let child
  const launch = async () => {
    const log = openSync(join(dir, 'server.log'), 'a')
    child = spawn(bin, ['-c', configFile, 'server'], { stdio: ['ignore', log, log], env: { ...process.env, RUST_LOG: 'warn' } })
    closeSync(log)
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.exited = exited
    await waitFor('the RPC port', () => portAnswers(rpcPort))
  }

  try {
    await launch()
    const nodeId = (await waitFor('the node id', () => cli('node', 'id', '-q').trim())).split('@')[0]
    cli('layout', 'assign', '-z', 'dc1', '-c', '1G', nodeId)
    cli('layout', 'apply', '--version', '1')
    cli('key', 'create', keyName)
    await waitFor('the bucket', () => cli('bucket', 'create', bucket) !== undefined)
    cli('bucket', 'allow', '--read', '--write', '--owner', bucket, '--key', keyName)
    const info = cli('key', 'info', keyName, '--show-secret')
    const accessKeyId = info.match(/Key ID:\s*(\S+)/)?.[1]
    const secretAccessKey = info.match(/Secret key:\s*(\S+)/)?.[1]
    if (!accessKeyId || !secretAccessKey) throw new Error(`garage: cannot parse key info:\n${info}`)
    const endpoint = `http://127.0.0.1:${s3Port}`
    await waitFor('the S3 API', () => s3Answers(endpoint))

    const halt = async () => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGKILL')
      await child.exited
    }
    return {
      endpoint,
      region: 'garage',
      bucket,
      accessKeyId,
      secretAccessKey,
      /** Client options that reach this server: endpoint, region, path-style, credentials. */
      connection: {
        endpoint,
        region: 'garage',
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
      },
      dir,
      halt,
      async restart() {
        await halt()
        await launch()
        await waitFor('the S3 API', () => s3Answers(endpoint))
      },
      async stop() {
        await halt()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  } catch (err) {
    child?.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const command = process.argv[2]
  if (command === 'ensure') {
    console.log(`garage: ${findGarage() ? 'already installed' : 'not found; installing with cargo install garage --locked'}`)
    const bin = ensureGarage()
    console.log(`garage: ${execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()} at ${bin}`)
  } else if (command === 'start') {
    const garage = await startGarage()
    const { stop, halt, restart, ...details } = garage
    console.log(JSON.stringify(details, null, 2))
    process.on('SIGINT', () => stop().then(() => process.exit(0)))
  } else {
    console.error('usage: node scripts/garage.mjs ensure|start')
    process.exit(2)
  }
}
