// Loading the package as users load it: `require()` and `import` from a project of their
// own, on the machine's Node (20) and on Node 22 (the `node` devDependency), as separate
// processes; and what a user sees when the native binary is missing: an error naming the
// platform package to install, from the package and from the command-line tool.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isMusl, missingBinaryError, platformAbi } from '../lib/native.js'
import { expectOneLineError } from './helpers/cli.js'
import { tempDirs } from './helpers/harness.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

const dir = tempDirs('co-loading-')

/** The first `node` on the PATH outside any node_modules (the machine's), and the `node@22` devDependency's. */
function nodeBinaries(): { label: string; path: string }[] {
  const machine = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && !d.includes('node_modules'))
    .map((d) => join(d, process.platform === 'win32' ? 'node.exe' : 'node'))
    .find((p) => existsSync(p))
  const devDependency = join(ROOT, 'node_modules', 'node', 'bin', 'node')
  if (!machine) throw new Error('no node on the PATH outside node_modules')
  return [
    { label: 'machine node', path: machine },
    { label: 'node@22 devDependency', path: devDependency },
  ]
}
const NODES = nodeBinaries()

/** The environment of the child processes: without napi-rs's override of the addon's path. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  delete env.NODE_OPTIONS
  return env
}

function run(node: string, args: string[], cwd: string) {
  const r = spawnSync(node, args, { cwd, env: childEnv(), encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A user's project with this package in its node_modules (a link to this checkout). */
function consumerProject(): string {
  const project = dir()
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(ROOT, join(project, 'node_modules', pkg.name), 'dir')
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
  return project
}

const EXPORTS = ['ContextOffloader', 'FileStorage', 'InMemoryStorage', 'S3Storage', 'FileSnapshotStorage', 'S3SnapshotStorage', 'countTokens', 'countTokensSync', 'ENCODINGS', 'withNativeTokenCounting']

/** A program that loads the package with `load` and round-trips one block through native memory. */
const roundTrip = (load: string) => `${load}.then(async (m) => {
  const storage = new m.InMemoryStorage()
  const reference = await storage.store('k', new TextEncoder().encode('hello'), 'text/plain')
  const { content } = await storage.retrieve(reference)
  new m.ContextOffloader({ storage })
  console.log(JSON.stringify({ keys: Object.keys(m).sort(), text: new TextDecoder().decode(content), tokens: m.countTokensSync('hello world') }))
})`

describe.each(NODES)('the package loads on the $label', ({ path: node }) => {
  const project = consumerProject()

  it('is the Node version it is meant to be (20 on the machine, 22 from the devDependency)', () => {
    const version = run(node, ['--version'], project).stdout.trim()
    expect(version).toMatch(node.includes('node_modules') ? /^v22\./ : /^v\d+\./)
    if (!node.includes('node_modules')) expect(Number(version.slice(1).split('.')[0])).toBeGreaterThanOrEqual(20)
  })

  it("with require('context-offloader') from CommonJS, without warnings", () => {
    writeFileSync(join(project, 'main.cjs'), roundTrip(`Promise.resolve(require('${pkg.name}'))`))
    const r = run(node, ['main.cjs'], project)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
    const out = JSON.parse(r.stdout)
    expect(out.keys).toEqual([...EXPORTS].sort())
    expect(out).toMatchObject({ text: 'hello', tokens: 2 })
  })

  it("with import('context-offloader') from an ES module, without warnings", () => {
    writeFileSync(join(project, 'main.mjs'), roundTrip(`import('${pkg.name}')`))
    const r = run(node, ['main.mjs'], project)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
    const out = JSON.parse(r.stdout)
    expect(out.keys).toEqual([...EXPORTS].sort())
    expect(out).toMatchObject({ text: 'hello', tokens: 2 })
  })

  it('require() and import give the same classes in one process', () => {
    writeFileSync(
      join(project, 'both.mjs'),
      `import { createRequire } from 'node:module'\n` +
        `const required = createRequire(import.meta.url)('${pkg.name}')\n` +
        `const imported = await import('${pkg.name}')\n` +
        `console.log(required.ContextOffloader === imported.ContextOffloader && required.FileStorage === imported.FileStorage)\n`,
    )
    const r = run(node, ['both.mjs'], project)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('true')
  })

  it('the command-line tool runs', () => {
    const r = run(node, [join(ROOT, 'bin', 'context-offloader.mjs'), 'ls', project, '--json'], project)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe('')
  })
})

/**
 * A copy of the package without its native binary, installed in a new project next to
 * the SDK (links to this checkout's dependencies), as a user has it when npm left the
 * platform package out. With `checkout`, `Cargo.toml` is copied too (a source checkout).
 */
function packageWithoutBinary({ checkout = false, platformPackage }: { checkout?: boolean; platformPackage?: string } = {}) {
  const project = dir()
  const modules = join(project, 'node_modules')
  const copy = join(modules, pkg.name)
  mkdirSync(copy, { recursive: true })
  for (const file of ['package.json', 'index.js', 'index.d.ts', 'binding.cjs', 'lib', 'bin', ...(checkout ? ['Cargo.toml'] : [])]) {
    cpSync(join(ROOT, file), join(copy, file), { recursive: true })
  }
  for (const dep of ['@strands-agents', 'zod', 'cli-progress', '@opentelemetry']) {
    symlinkSync(join(ROOT, 'node_modules', dep), join(modules, dep), 'dir')
  }
  if (platformPackage !== undefined) {
    // Installed, but not a binary this machine can load.
    const installed = join(modules, platformPackage)
    mkdirSync(installed)
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: platformPackage, version: pkg.version, main: 'addon.node' }))
    writeFileSync(join(installed, 'addon.node'), 'not a shared library')
  }
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
  return { project, bin: join(copy, 'bin', 'context-offloader.mjs') }
}

/** This machine's napi-rs platform name, worked out here independently of lib/native.js. */
function expectedAbi(): string {
  if (process.platform === 'win32') return `win32-${process.arch}-msvc`
  if (process.platform === 'linux') {
    const musl = existsSync('/usr/bin/ldd') ? readFileSync('/usr/bin/ldd', 'utf8').includes('musl') : false
    return `linux-${process.arch}-${musl ? 'musl' : 'gnu'}`
  }
  return `${process.platform}-${process.arch}`
}

describe('a missing native binary', () => {
  const platformPackage = `${pkg.name}-${expectedAbi()}`
  const node = NODES[0].path

  it('is this machine a platform the package ships a binary for (the checks below name its package)', () => {
    expect(platformAbi()).toBe(expectedAbi())
    expect(Object.keys(pkg.optionalDependencies)).toContain(platformPackage)
  })

  it('import and require fail naming the platform package to install, without `npm run build` outside a checkout', () => {
    const { project } = packageWithoutBinary()
    for (const [file, program] of [
      ['load.mjs', `import('${pkg.name}').then(() => console.log('loaded'), (e) => console.log(e.message))`],
      ['load.cjs', `try { require('${pkg.name}'); console.log('loaded') } catch (e) { console.log(e.message) }`],
    ]) {
      writeFileSync(join(project, file), program)
      const r = run(node, [file], project)
      expect(r.code, r.stderr).toBe(0)
      const message = r.stdout.trim()
      expect(message).not.toBe('loaded')
      expect(message).toContain(`npm install ${platformPackage}@${pkg.version}`)
      expect(message).toContain('optional dependency')
      expect(message).not.toContain('npm run build')
      expect(message.split('\n')).toHaveLength(1)
    }
  })

  it('in a source checkout (Cargo.toml next to package.json), the error also says how to build it', () => {
    const { project } = packageWithoutBinary({ checkout: true })
    writeFileSync(join(project, 'load.mjs'), `import('${pkg.name}').then(() => console.log('loaded'), (e) => console.log(e.message))`)
    const r = run(node, ['load.mjs'], project)
    expect(r.stdout).toContain(platformPackage)
    expect(r.stdout).toContain('build it with `npm run build`')
  })

  it('an installed platform package that does not load is reported with its own failure', () => {
    const { project } = packageWithoutBinary({ platformPackage })
    writeFileSync(join(project, 'load.mjs'), `import('${pkg.name}').then(() => console.log('loaded'), (e) => console.log(e.message))`)
    const r = run(node, ['load.mjs'], project)
    expect(r.stdout).toContain(`the native binary for ${expectedAbi()} (${platformPackage}) did not load`)
    expect(r.stdout).toMatch(/invalid ELF header|not a valid|file too short|slice is not valid/i)
    expect(r.stdout).not.toContain('npm install')
  })

  it('the command-line tool prints it as one line with exit code 2 and no stack trace; --help still works', () => {
    const { project, bin } = packageWithoutBinary()
    const r = run(node, [bin, 'ls', project], project)
    expectOneLineError(r, expect, new RegExp(`npm install ${platformPackage}`))
    expect(r.stdout).toBe('')
    const help = run(node, [bin, '--help'], project)
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: context-offloader <command>')
  })

  it('platform names follow napi-rs: gnu or musl on Linux, msvc on Windows, and an unsupported platform lists the supported ones', () => {
    expect(platformAbi('linux', 'x64', () => false)).toBe('linux-x64-gnu')
    expect(platformAbi('linux', 'arm64', () => true)).toBe('linux-arm64-musl')
    expect(platformAbi('linux', 'arm', () => false)).toBe('linux-arm-gnueabihf')
    expect(platformAbi('darwin', 'arm64')).toBe('darwin-arm64')
    expect(platformAbi('win32', 'arm64')).toBe('win32-arm64-msvc')
    expect(typeof isMusl()).toBe('boolean')
    const unsupported = missingBinaryError(new Error('Cannot find native binding'), { abi: 'freebsd-x64', root: new URL(`file://${dirname(ROOT)}/no-such-checkout/`) })
    expect(unsupported.message).toMatch(/native loader binding\.cjs is missing/)
    const elsewhere = missingBinaryError(new Error('Cannot find native binding'), { abi: 'freebsd-x64' })
    expect(elsewhere.message).toContain('no prebuilt native binary for freebsd-x64')
    expect(elsewhere.message).toContain('linux-x64-gnu, linux-x64-musl')
    expect(elsewhere.cause).toBeInstanceOf(Error)
  })
})
