/**
 * Packaging: what `npm publish` would ship, installed the way a user installs it.
 *
 * Packs the root package and this machine's platform package (with the addon that
 * `npm run build` just produced), installs them into a new TypeScript project next
 * to `@strands-agents/sdk`, then checks that the project type-checks under strict
 * `node16` and `bundler` resolution, that a type error is caught, that the project's
 * own vitest test passes, and that without the platform package the import fails
 * with a message naming the platform. One install serves every check; everything is
 * created under one temporary directory that is removed afterwards.
 */
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const binaryName: string = pkg.napi?.binaryName ?? pkg.name
const platformAbi = hostPlatformAbi()
const platformPkgName = `${pkg.name}-${platformAbi}`
const addonFile = `${binaryName}.${platformAbi}.node`
const platformDir = join(ROOT, 'npm', platformAbi)
const platformArch = `${process.platform}-${process.arch}`
/** How npm is run: the npm that launched this test (npm scripts and npx set it), else `npm` on the PATH. */
const npmCli = process.env.npm_execpath

const MINUTE = 60_000

/** The napi-rs platform name of this machine, e.g. `linux-x64-gnu`, `darwin-arm64`. */
function hostPlatformAbi(): string {
  const { platform, arch } = process
  if (platform === 'win32') return `win32-${arch}-msvc`
  if (platform === 'linux') {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
    return `linux-${arch}-${report?.header?.glibcVersionRuntime ? 'gnu' : 'musl'}`
  }
  return `${platform}-${arch}`
}

interface Run {
  status: number | null
  stdout: string
  stderr: string
}

/** Output of a child process, for assertion messages. */
const show = (r: Run) => `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`

/**
 * The environment for child processes: this process's, without what npm and vitest
 * set for themselves (`npm_*` would point the child npm at this repository's config
 * and package; `VITEST_*` would make the child vitest think it is a worker).
 */
function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of Object.keys(env)) {
    if (/^(npm_|vitest)/i.test(key) || key === 'INIT_CWD' || key === 'NAPI_RS_NATIVE_LIBRARY_PATH') delete env[key]
  }
  return { ...env, ...extra }
}

function run(command: string, args: string[], cwd: string, shell = false): Run {
  const r = spawnSync(command, args, { cwd, env: childEnv(), encoding: 'utf8', maxBuffer: 64 << 20, shell })
  if (r.error) throw r.error
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

function npm(args: string[], cwd: string): Run {
  return npmCli && /\.[cm]?js$/.test(npmCli)
    ? run(process.execPath, [npmCli, ...args], cwd)
    : run('npm', args, cwd, process.platform === 'win32')
}

/** Runs a Node script (ESM) in `cwd` with this process's Node binary. */
function nodeEval(script: string, cwd: string): Run {
  return run(process.execPath, ['--input-type=module', '-e', script], cwd)
}

interface PackedFile {
  path: string
}
interface Packed {
  filename: string
  files: PackedFile[]
}

/** `npm pack` of the package in `dir` into `destination`; returns npm's description of the tarball. */
function pack(dir: string, destination: string): Packed {
  const r = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', destination], dir)
  if (r.status !== 0) throw new Error(`npm pack failed in ${dir}\n${show(r)}`)
  const [packed] = JSON.parse(r.stdout) as Packed[]
  return packed
}

function writeFiles(dir: string, files: Record<string, string | object>) {
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n')
  }
}

/** Every file the package's `exports` name (entries and their typings), package-relative. */
function exportedFiles(): string[] {
  const targets = (value: unknown): string[] =>
    typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(targets) : []
  return [...new Set(targets(pkg.exports).map((p) => p.replace(/^\.\//, '')))].sort()
}

/** Every JavaScript module under lib/, as package-relative paths (`lib/storage/file.js`). */
function libModules(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(`${dir}/${entry.name}`) : entry.name.endsWith('.js') ? [`${dir}/${entry.name}`] : [],
    )
  return walk('lib').sort()
}

/** `file(line,col): error TSxxxx: ...` lines of tsc's output. */
function tscErrors(r: Run): { file: string; line: string }[] {
  return (r.stdout + r.stderr)
    .split(/\r?\n/)
    .map((line) => ({ line, match: /^(.+?)\(\d+,\d+\): error TS\d+/.exec(line) }))
    .filter((e) => e.match)
    .map((e) => ({ file: e.match![1].replace(/\\/g, '/'), line: e.line }))
}

describe('platform packages', () => {
  it('there is one npm/<platform> package per napi target, pinned in optionalDependencies', () => {
    const dirs = readdirSync(join(ROOT, 'npm')).sort()
    expect(dirs).toHaveLength(pkg.napi.targets.length)
    const pinned: Record<string, string> = {}
    for (const dir of dirs) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'npm', dir, 'package.json'), 'utf8'))
      const file = `${binaryName}.${dir}.node`
      expect(manifest.name).toBe(`${pkg.name}-${dir}`)
      expect(manifest.version).toBe(pkg.version)
      expect(manifest.main).toBe(file)
      expect(manifest.files).toEqual([file])
      expect(manifest.os).toHaveLength(1)
      expect(manifest.cpu).toHaveLength(1)
      if (manifest.os[0] === 'linux') expect(manifest.libc).toEqual([dir.endsWith('-musl') ? 'musl' : 'glibc'])
      expect(existsSync(join(ROOT, 'npm', dir, 'README.md'))).toBe(true)
      pinned[manifest.name] = pkg.version
    }
    expect(pkg.optionalDependencies).toEqual(pinned)
  })

  it("the README's images are absolute URLs into the package's repository (npm does not show relative ones)", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1])
    expect(images.length).toBeGreaterThan(0)
    const repo = /github\.com\/([^/]+\/[^/.]+)(?:\.git)?$/.exec(pkg.repository.url)?.[1]
    expect(repo, pkg.repository.url).toBeDefined()
    for (const image of images) expect(image).toMatch(new RegExp(`^https://raw\\.githubusercontent\\.com/${repo}/main/`))
    for (const image of images) expect(existsSync(join(ROOT, image.replace(/^https:\/\/raw\.githubusercontent\.com\/[^/]+\/[^/]+\/main\//, '')))).toBe(true)
  })

  it('the root package ships no addon and lists the JS entry, its modules, loader and typings', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['index.js', 'lib/', 'index.d.ts', 'binding.cjs', 'binding.d.cts']))
    expect(pkg.files.filter((f: string) => f.includes('.node'))).toEqual([])
  })
})

describe.skipIf(!existsSync(platformDir))(`the packed package, installed on ${platformAbi}`, () => {
  let work = ''
  let consumer = ''
  let rootPacked: Packed
  let platformPacked: Packed
  let install: Run

  beforeAll(() => {
    if (!existsSync(join(ROOT, addonFile))) {
      throw new Error(`${addonFile} is missing from the package root: run \`npm run build\` first`)
    }
    work = mkdtempSync(join(tmpdir(), 'context-offloader-package-'))
    const packDir = join(work, 'pack')
    mkdirSync(packDir)

    rootPacked = pack(ROOT, packDir)

    // The platform package as published: its manifest and README plus the fresh addon.
    const platformCopy = join(work, 'platform')
    mkdirSync(platformCopy)
    for (const file of ['package.json', 'README.md']) copyFileSync(join(platformDir, file), join(platformCopy, file))
    copyFileSync(join(ROOT, addonFile), join(platformCopy, addonFile))
    platformPacked = pack(platformCopy, packDir)

    consumer = join(work, 'consumer')
    const tarball = (p: Packed) => `file:../pack/${p.filename}`
    const baseCompilerOptions = {
      strict: true,
      target: 'es2022',
      types: ['node'],
      noEmit: true,
      // What `tsc --init` sets: third-party declarations are not re-checked. The
      // declarations check below turns it off for this package's own files.
      skipLibCheck: true,
    }
    writeFiles(consumer, {
      'package.json': {
        name: 'context-offloader-consumer',
        private: true,
        type: 'module',
        dependencies: {
          [pkg.name]: tarball(rootPacked),
          '@strands-agents/sdk': pkg.devDependencies['@strands-agents/sdk'],
          zod: pkg.devDependencies.zod,
          // The frameworks of the adapters (optional peers), for their typings.
          langchain: pkg.devDependencies.langchain,
          '@langchain/core': pkg.devDependencies['@langchain/core'],
          '@openai/agents': pkg.devDependencies['@openai/agents'],
          ai: pkg.devDependencies.ai,
          '@types/json-schema': pkg.devDependencies['@types/json-schema'],
        },
        devDependencies: {
          '@types/node': '^22',
          typescript: pkg.devDependencies.typescript,
          vitest: pkg.devDependencies.vitest,
        },
        // The platform package comes in as the optional dependency it is for users.
        // Without the override npm would first ask the registry for
        // `<platform package>@<version>`; the override points that dependency at the
        // local tarball, so npm never looks the platform package up.
        // (The Strands SDK's optional peer `openai` ^6 and the OpenAI Agents SDK's `openai`
        // ^7 conflict; a project with both picks one, as this repository does.)
        overrides: { [platformPkgName]: tarball(platformPacked), '@strands-agents/sdk': pkg.overrides['@strands-agents/sdk'] },
      },
      'tsconfig.json': {
        compilerOptions: { ...baseCompilerOptions, module: 'node16', moduleResolution: 'node16' },
        include: ['src', 'test'],
      },
      'tsconfig.bundler.json': {
        extends: './tsconfig.json',
        compilerOptions: { module: 'esnext', moduleResolution: 'bundler' },
      },
      'tsconfig.declarations.json': {
        extends: './tsconfig.json',
        compilerOptions: { skipLibCheck: false },
      },
      'tsconfig.type-error.json': {
        extends: './tsconfig.json',
        include: ['bad'],
      },
      // Every documented option, under import (.ts of a "type": "module" project) and
      // require() (.cts), with nothing but this package and its declarations' imports checked.
      'tsconfig.strict.json': {
        compilerOptions: { ...baseCompilerOptions, module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: false },
        include: ['strict'],
      },
      'strict/options.ts': STRICT_ESM,
      'strict/require.cts': STRICT_CJS,
      'strict/core.ts': STRICT_CORE_ESM,
      'strict/core-require.cts': STRICT_CORE_CJS,
      'strict/langchain.ts': STRICT_LANGCHAIN_ESM,
      'strict/langchain-require.cts': STRICT_LANGCHAIN_CJS,
      // The AI SDK adapter: a consumer's program, with errors it must report (@ts-expect-error).
      'strict/ai.ts': readFileSync(join(ROOT, '__test__', 'fixtures', 'ai-consumer.ts'), 'utf8'),
      'strict/ai-require.cts': STRICT_AI_CJS,
      'strict/openai-agents.ts': STRICT_OPENAI_AGENTS_ESM,
      'strict/openai-agents-require.cts': STRICT_OPENAI_AGENTS_CJS,
      'strict/mcp.ts': STRICT_MCP_ESM,
      'strict/mcp-require.cts': STRICT_MCP_CJS,
      'src/program.ts': PROGRAM,
      'test/consumer.test.ts': CONSUMER_TEST,
      'bad/type-error.ts': TYPE_ERROR,
    })

    install = npm(['install', '--no-audit', '--no-fund', '--loglevel=http'], consumer)
    if (install.status !== 0) throw new Error(`npm install failed in the consumer project\n${show(install)}`)
  }, 10 * MINUTE)

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('the root tarball has the entry, the loader, the typings, the command-line tool and every lib/ module, and no addon', () => {
    const files = rootPacked.files.map((f) => f.path).sort()
    const modules = libModules()
    const entries = exportedFiles()
    expect(modules).toEqual(expect.arrayContaining(['lib/plugin.js', 'lib/retrieval-tool.js', 'lib/storage/file.js', 'lib/offloader.js']))
    expect(entries).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'core.js', 'core.d.ts', 'package.json']))
    expect(files).toEqual(expect.arrayContaining(['bin/context-offloader.mjs', 'binding.cjs', 'binding.d.cts', ...entries, ...modules]))
    expect(modules).toEqual(expect.arrayContaining(['lib/cli/main.js', 'lib/cli/commands/grep.js']))
    const allowed = new Set(['bin/context-offloader.mjs', 'binding.cjs', 'binding.d.cts', 'README.md', 'LICENSE', ...entries, ...modules])
    expect(files.filter((f) => !allowed.has(f))).toEqual([])
  })

  it('the platform tarball has the addon as its main file', () => {
    expect(platformPacked.files.map((f) => f.path).sort()).toEqual([addonFile, 'package.json', 'README.md'].sort())
  })

  it('npm installs the platform package from the local tarball as an optional dependency, without asking the registry', () => {
    const log = install.stdout + install.stderr
    const lookup = (name: string) => new RegExp(`GET \\d+ \\S*/${name}(?:[\\s/?]|$)`, 'm')
    expect(log).not.toMatch(lookup(platformPkgName))
    // Control: the log does show registry lookups, e.g. of the other platforms'
    // packages, which npm resolves (and skips) as usual.
    const others = Object.keys(pkg.optionalDependencies).filter((name) => name !== platformPkgName)
    expect(others.some((name) => lookup(name).test(log)), log.slice(-4000)).toBe(true)
    expect(existsSync(join(consumer, 'node_modules', platformPkgName, addonFile))).toBe(true)
    const lock = JSON.parse(readFileSync(join(consumer, 'package-lock.json'), 'utf8'))
    const entry = lock.packages[`node_modules/${platformPkgName}`]
    expect(entry).toMatchObject({ version: pkg.version, optional: true })
    expect(entry.resolved).toMatch(/^file:/)
  })

  const tsc = (project: string) =>
    run(process.execPath, [join(consumer, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], consumer)

  it('a strict project with module/moduleResolution node16 type-checks', () => {
    const r = tsc('tsconfig.json')
    expect(r.status, show(r)).toBe(0)
  }, 3 * MINUTE)

  it('a strict project with moduleResolution bundler type-checks', () => {
    const r = tsc('tsconfig.bundler.json')
    expect(r.status, show(r)).toBe(0)
  }, 3 * MINUTE)

  it("the package's own declarations have no errors with skipLibCheck off", () => {
    // Other packages' declarations may have errors of their own here (the SDK's refer
    // to optional peers such as @aws-sdk/client-s3, which are not installed); only
    // errors in this package's files or in the consumer's sources count.
    const r = tsc('tsconfig.declarations.json')
    const errors = tscErrors(r)
    if (r.status !== 0) expect(errors.length, show(r)).toBeGreaterThan(0)
    const ours = errors.filter((e) => !e.file.includes('node_modules/') || e.file.includes(`node_modules/${pkg.name}/`))
    expect(ours.map((e) => e.line)).toEqual([])
  }, 3 * MINUTE)

  it('every documented option compiles, strict, with skipLibCheck: false, under import and require(), without @aws-sdk/client-s3', () => {
    expect(existsSync(join(consumer, 'node_modules', '@aws-sdk', 'client-s3'))).toBe(false)
    const r = tsc('tsconfig.strict.json')
    expect(r.status, show(r)).toBe(0)
    // Control: the same project with an option of the wrong type fails, so the check has teeth.
    writeFiles(consumer, { 'strict/wrong.ts': `import { S3Storage } from '${pkg.name}'\nexport const s = new S3Storage('b', { forcePathStyle: 'yes' })\n` })
    try {
      const wrong = tsc('tsconfig.strict.json')
      expect(wrong.status, show(wrong)).not.toBe(0)
      expect(tscErrors(wrong).map((e) => e.file)).toEqual(['strict/wrong.ts'])
    } finally {
      rmSync(join(consumer, 'strict', 'wrong.ts'))
    }
  }, 3 * MINUTE)

  it('tsc rejects a number passed as storage', () => {
    const r = tsc('tsconfig.type-error.json')
    expect(r.status, show(r)).not.toBe(0)
    const errors = tscErrors(r)
    expect(errors.length, show(r)).toBeGreaterThan(0)
    expect(errors.every((e) => e.file === 'bad/type-error.ts'), show(r)).toBe(true)
    expect(errors.map((e) => e.line).join('\n')).toContain('number')
  }, 3 * MINUTE)

  it("the project's own vitest test passes", () => {
    const r = run(process.execPath, [join(consumer, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], consumer)
    expect(r.status, show(r)).toBe(0)
    expect(r.stdout.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Tests\s+5 passed/)
  }, 3 * MINUTE)

  it('plain node requires the package from CommonJS (require(esm))', () => {
    const r = run(process.execPath, ['-e', `const m = require('${pkg.name}'); const tools = new m.ContextOffloader({ storage: new m.InMemoryStorage() }).getTools(); if (tools[0].name !== 'retrieve_offloaded_content') throw new Error(tools[0].name); console.log(JSON.stringify(Object.keys(m)))`], consumer)
    expect(r.status, show(r)).toBe(0)
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout)).toEqual(expect.arrayContaining(['ContextOffloader', 'FileStorage', 'InMemoryStorage', 'S3Storage']))
  })

  it('plain node imports the package', () => {
    const r = nodeEval(`const m = await import('${pkg.name}'); console.log(JSON.stringify(Object.keys(m)))`, consumer)
    expect(r.status, show(r)).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(expect.arrayContaining(['ContextOffloader', 'FileStorage', 'InMemoryStorage']))
  })

  it('the installed command-line tool runs: npx context-offloader ls on a store the package wrote', () => {
    const store = join(work, 'cli-store')
    const wrote = nodeEval(
      `const { FileStorage } = await import('${pkg.name}'); ` +
        `console.log(await new FileStorage(${JSON.stringify(store)}).store('k', new TextEncoder().encode('hello'), 'text/plain'))`,
      consumer,
    )
    expect(wrote.status, show(wrote)).toBe(0)
    const bin = join(consumer, 'node_modules', '.bin', process.platform === 'win32' ? 'context-offloader.cmd' : 'context-offloader')
    const listed = run(bin, ['ls', store, '--json'], consumer, process.platform === 'win32')
    expect(listed.status, show(listed)).toBe(0)
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ reference: wrote.stdout.trim(), contentType: 'text/plain', bytes: 5 })
    const missing = run(bin, ['ls', join(work, 'no-such-store')], consumer, process.platform === 'win32')
    expect(missing.status).toBe(2)
    expect(missing.stderr).toMatch(/^context-offloader: error: no such directory: .*\n$/)
  })

  it('the installed MCP proxy runs: the official client, installed with the package, through npx context-offloader mcp', () => {
    const bin = join(consumer, 'node_modules', '.bin', process.platform === 'win32' ? 'context-offloader.cmd' : 'context-offloader')
    const upstream = join(ROOT, '__test__', 'fixtures', 'mcp', 'scripted-server.mjs')
    const r = nodeEval(
      `const { Client } = await import('@modelcontextprotocol/sdk/client/index.js'); ` +
        `const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'); ` +
        `const t = new StdioClientTransport({ command: ${JSON.stringify(bin)}, args: ['mcp', '--', process.execPath, ${JSON.stringify(upstream)}], stderr: 'ignore' }); ` +
        `const c = new Client({ name: 'consumer', version: '1' }); await c.connect(t); ` +
        `const r = await c.callTool({ name: 'text', arguments: { bytes: 100000 } }); ` +
        `const names = (await c.listTools()).tools.map((x) => x.name); await c.close(); ` +
        `console.log(JSON.stringify({ head: r.content[0].text.split('\\n')[0], last: names.at(-1) }))`,
      consumer,
    )
    expect(r.status, show(r)).toBe(0)
    expect(JSON.parse(r.stdout.trim())).toEqual({ head: expect.stringMatching(/^\[Offloaded: 1 blocks?, [\d,]+ tokens\]$/), last: 'retrieve_offloaded_content' })
  })

  it('without the platform package the import fails with a message naming the platform', () => {
    const installed = join(consumer, 'node_modules', platformPkgName)
    const parked = join(work, 'parked-platform-package')
    renameSync(installed, parked)
    try {
      const caught = nodeEval(
        `try { await import('${pkg.name}'); console.log('{"loaded":true}') }` +
          ` catch (e) { console.log(JSON.stringify({ message: String(e?.message) })) }`,
        consumer,
      )
      expect(caught.status, show(caught)).toBe(0)
      const { message, loaded } = JSON.parse(caught.stdout)
      expect(loaded, 'the package loaded without its platform package').toBeUndefined()
      expect(message).toContain(`the native binary for ${platformAbi} is not installed`)
      expect(message).toContain(`npm install ${platformPkgName}@${pkg.version}`)
      // An installed package is no source checkout: nothing about building it.
      expect(message).not.toContain('npm run build')

      // And uncaught, as a user would meet it.
      const plain = run(process.execPath, ['-e', `import('${pkg.name}')`], consumer)
      expect(plain.status, show(plain)).not.toBe(0)
      expect(plain.stderr).toContain(`npm install ${platformPkgName}`)

      // The command-line tool says it in one line, exit code 2.
      const bin = join(consumer, 'node_modules', '.bin', process.platform === 'win32' ? 'context-offloader.cmd' : 'context-offloader')
      const cli = run(bin, ['ls', work], consumer, process.platform === 'win32')
      expect(cli.status, show(cli)).toBe(2)
      expect(cli.stderr).toMatch(new RegExp(`^context-offloader: error: .*npm install ${platformPkgName}.*\n$`))
    } finally {
      renameSync(parked, installed)
    }
  })
})

/** Every documented option of the plugin and the storages, and the SDK's `Storage` name, from an ES module. */
const STRICT_ESM = `import { ContextOffloader, FileStorage, InMemoryStorage, S3SnapshotStorage, S3Storage } from 'context-offloader'
import type { ContextOffloaderConfig, S3StorageOptions, Storage } from 'context-offloader'

const s3Options: S3StorageOptions = {
  prefix: 'offloaded/',
  region: 'eu-west-1',
  endpoint: 'http://127.0.0.1:3900',
  forcePathStyle: true,
  credentials: { accessKeyId: 'id', secretAccessKey: 'secret', sessionToken: 'token' },
  timeoutMs: 10_000,
  maxAttempts: 3,
  maxInFlight: 8,
  ttlSeconds: 3_600,
  cleanupIntervalSeconds: 600,
  clock: () => Date.now(),
}

/** Code written against the SDK's \`Storage\` type, with only the import switched. */
export async function roundTrip(storage: Storage, text: string): Promise<string> {
  const reference = await storage.store('k', new TextEncoder().encode(text), 'text/plain')
  const { content, contentType } = await storage.retrieve(reference)
  return \`\${contentType}:\${new TextDecoder().decode(content)}\`
}

export const storages: Storage[] = [
  new S3Storage('bucket', s3Options),
  new InMemoryStorage({ evictAfterTurns: 5, ttlSeconds: 60, maxBytes: 1 << 20, dedup: true, cleanupIntervalSeconds: 30, clock: Date.now }),
  new FileStorage({ artifactDir: './artifacts', durable: true, ttlSeconds: 60, maxBytes: 1 << 30, dedup: true }),
]

const config: ContextOffloaderConfig = {
  storage: storages[0],
  maxResultTokens: 3_000,
  previewTokens: 500,
  includeRetrievalTool: true,
  evictAfterCycles: null,
  ttlSeconds: 600,
  tokenizer: 'o200k_base',
  exactCountLimit: 100_000,
  preview: 'headTail',
  headShare: 0.3,
  shouldOffload: (toolUse) => (toolUse.name === 'shell' ? true : undefined),
  neverOffload: ['calculator'],
  onStorageError: 'truncate',
  references: 'opaque',
  retrieval: 'extended',
  offloadErrors: true,
}
export const plugin = new ContextOffloader(config)
export const snapshots = new S3SnapshotStorage({
  bucket: 'bucket',
  prefix: 'sessions',
  region: 'eu-west-1',
  endpoint: 'http://127.0.0.1:3900',
  forcePathStyle: true,
  credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
  timeoutMs: 5_000,
  maxAttempts: 2,
  maxInFlight: 4,
})
`

/** The same from CommonJS (a .cts file: \`require()\` of the package). */
const STRICT_CJS = `import offloader = require('context-offloader')

const storage: offloader.Storage = new offloader.S3Storage('bucket', {
  endpoint: 'http://127.0.0.1:3900',
  forcePathStyle: true,
  credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
})
export const plugin = new offloader.ContextOffloader({ storage, maxResultTokens: 3_000, previewTokens: 500, references: 'opaque' })
export const count: number = offloader.countTokensSync('hello', 'cl100k_base')
`

/** Every option of the framework-neutral core, and its API, from an ES module. */
const STRICT_CORE_ESM = `import { FileStorage, InMemoryStorage, Offloader, RETRIEVAL_TOOL_NAME, S3Storage } from 'context-offloader/core'
import type { OffloadedResult, OffloaderOptions, OffloadPart, RetrievalTool } from 'context-offloader/core'

const options: OffloaderOptions = {
  storage: new FileStorage({ artifactDir: './artifacts', ttlSeconds: 60 }),
  maxResultTokens: 3_000,
  previewTokens: 500,
  tokenizer: 'o200k_base',
  exactCountLimit: 100_000,
  preview: 'headTail',
  headShare: 0.7,
  references: 'opaque',
  retrieval: 'extended',
  ttlSeconds: 600,
  neverOffload: ['raw'],
  shouldOffload: (call, result) => (call.name === 'big' || result.status === 'error' ? true : undefined),
  onStorageError: 'truncate',
  offloadErrors: true,
  includeRetrievalTool: true,
}
export const offloader = new Offloader(options)
export const other = new Offloader({ storage: new S3Storage('bucket', { endpoint: 'http://127.0.0.1:3900' }) })
export const memory = new Offloader({ storage: new InMemoryStorage({ maxBytes: 1 << 20 }) })
const parts: OffloadPart[] = [{ type: 'text', text: 'x' }, { type: 'image', data: new Uint8Array(1), mediaType: 'image/png' }, { type: 'file', url: 'https://example.com/a.pdf' }]
export const result: Promise<OffloadedResult | null> = offloader.offloadResult({ toolName: 't', toolCallId: 'c', content: parts, sessionId: 's', isError: false, reuse: true })
const tool: RetrievalTool = offloader.retrievalTool
export const name: 'retrieve_offloaded_content' = RETRIEVAL_TOOL_NAME
export const answer: Promise<string> = tool.execute({ reference: 'ref_x', pattern: null, page: 2 }, { sessionId: 's' })
`

/** The core from CommonJS. */
const STRICT_CORE_CJS = `import core = require('context-offloader/core')

export const offloader = new core.Offloader({ maxResultTokens: 2_000, previewTokens: 200 })
export const answer: Promise<string> = offloader.retrievalTool.execute({ reference: 'mem_1_c_0' })
`

/** The LangChain adapter in a createAgent, from an ES module. */
const STRICT_LANGCHAIN_ESM = `import { createAgent, toolErrorMiddleware, tool } from 'langchain'
import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { FileStorage } from 'context-offloader/core'
import { contextOffloaderMiddleware, METADATA_KEY } from 'context-offloader/langchain'
import type { ContextOffloaderMiddleware, OffloadedToolMessageMetadata } from 'context-offloader/langchain'

declare const model: BaseChatModel
const fetchLogs = tool(async () => 'log', { name: 'fetch_logs', description: 'logs', schema: { type: 'object', properties: {} } })
const middleware: ContextOffloaderMiddleware = contextOffloaderMiddleware({ storage: new FileStorage('./artifacts'), references: 'opaque', retrieval: 'extended' })
export const agent = createAgent({ model, tools: [fetchLogs], middleware: [middleware, toolErrorMiddleware({ onError: (e) => String(e) })] })
export const key: 'contextOffloader' = METADATA_KEY
export const tokens = (m: OffloadedToolMessageMetadata): number => m.tokens + middleware.offloader.stats().offloads
`

/** The LangChain adapter from CommonJS. */
const STRICT_LANGCHAIN_CJS = `import adapter = require('context-offloader/langchain')

export const middleware = adapter.contextOffloaderMiddleware({ maxResultTokens: 4_000, previewTokens: 400 })
`

/** The OpenAI Agents adapter, with a typed run context, from an ES module. */
const STRICT_OPENAI_AGENTS_ESM = `import { Agent, tool } from '@openai/agents'
import { Offloader } from 'context-offloader/core'
import { DEFAULT_TOOL_ERROR_TEXT, offloadTools } from 'context-offloader/openai-agents'

interface Ctx { userId: string }
const fetchLogs = tool({
  name: 'fetch_logs',
  description: 'logs',
  parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
  execute: async () => 'log',
})
export const agent = new Agent<Ctx>({
  name: 'ops',
  instructions: 'Answer.',
  tools: offloadTools<Ctx>([fetchLogs], { references: 'opaque', sessionId: (rc) => rc.context.userId }),
})
export const shared = offloadTools([fetchLogs], { offloader: new Offloader({ retrieval: 'extended' }), sessionId: 'thread-1' })
export const text: string = DEFAULT_TOOL_ERROR_TEXT
`

/** The AI SDK adapter from CommonJS. */
const STRICT_AI_CJS = `import adapter = require('context-offloader/ai')

export const tools = adapter.offloadTools({}, { maxResultTokens: 4_000, previewTokens: 400, sessionId: 'chat-1' })
`

/** The OpenAI Agents adapter from CommonJS. */
const STRICT_OPENAI_AGENTS_CJS = `import adapter = require('context-offloader/openai-agents')

export const tools = adapter.offloadTools([], { maxResultTokens: 4_000, previewTokens: 400 })
`

/** The MCP proxy from an ES module: every upstream kind, the SDK's own transports, and errors it must report. */
const STRICT_MCP_ESM = `import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { InMemoryStorage } from 'context-offloader/core'
import { ChildProcessTransport, LineTransport, PROXY_DEFAULTS, createOffloadingProxy, type UpstreamEnd } from 'context-offloader/mcp'

export async function serve(): Promise<UpstreamEnd> {
  const proxy = createOffloadingProxy({
    upstream: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], env: { API_KEY: 'k' }, stderr: 'inherit' },
    storage: new InMemoryStorage({ maxBytes: 256 * 1024 * 1024 }),
    maxResultTokens: 4_000,
    preview: 'headTail',
    offloadMedia: true,
    timeoutMs: 60_000,
    neverOffload: ['read_media_file'],
    log: (message: string) => process.stderr.write(message),
  })
  await proxy.connect(process.argv[2] === 'sdk' ? new StdioServerTransport() : new LineTransport(process.stdin, process.stdout))
  const stats = proxy.offloader.stats()
  process.stderr.write(String(stats.offloads) + String(proxy.protocolVersion))
  return proxy.upstreamEnded
}
export const overHttp = createOffloadingProxy({ upstream: { url: new URL('http://127.0.0.1:3000/mcp'), headers: { authorization: 'Bearer x' } }, references: 'paths' })
export const overOwn = createOffloadingProxy({ upstream: new ChildProcessTransport({ command: 'node', args: ['server.js'] }), tokenizer: 'heuristic' })
export const opaque: 'opaque' = PROXY_DEFAULTS.references
// @ts-expect-error: the upstream is required
createOffloadingProxy({ maxResultTokens: 10 })
// @ts-expect-error: references are 'paths' or 'opaque'
createOffloadingProxy({ upstream: { command: 'x' }, references: 'ids' })
// @ts-expect-error: args are strings
createOffloadingProxy({ upstream: { command: 'x', args: [1] } })
`

/** The MCP proxy from CommonJS. */
const STRICT_MCP_CJS = `import mcp = require('context-offloader/mcp')

export const proxy = mcp.createOffloadingProxy({ upstream: { command: 'node', args: ['server.js'] }, maxResultTokens: 4_000, previewTokens: 400 })
`

/** The consumer's program: the SDK's types and ours, used together. */
const PROGRAM = `import { Agent } from '@strands-agents/sdk'
import type { Plugin } from '@strands-agents/sdk'
import {
  ContextOffloader as SdkContextOffloader,
  type Storage as SdkOffloaderStorage,
} from '@strands-agents/sdk/vended-plugins/context-offloader'
import { ContextOffloader, FileStorage, InMemoryStorage, countTokens, withNativeTokenCounting } from 'context-offloader'
import type { Encoding, OffloadResult, OffloaderStats } from 'context-offloader'

export interface RoundTrip {
  reference: string
  text: string
  contentType: string
}

/** Stores one block and reads it back. */
export async function roundTrip(storage: SdkOffloaderStorage, text: string): Promise<RoundTrip> {
  const reference: string = await storage.store('k', new TextEncoder().encode(text), 'text/plain')
  const { content, contentType } = await storage.retrieve(reference)
  return { reference, text: new TextDecoder().decode(content), contentType }
}

/** An agent with the native plugin on a FileStorage in \`dir\`; returns its plugin and storage. */
export function agentWithFileStorage(dir: string): { agent: Agent; plugin: Plugin; storage: FileStorage } {
  const storage = new FileStorage(dir)
  const plugin = new ContextOffloader({ storage, maxResultTokens: 2_500, previewTokens: 1_000 })
  const agent = new Agent({ plugins: [plugin] })
  return { agent, plugin, storage }
}

/** Our storages also fit the SDK's own plugin, and the SDK's options type fits ours. */
export function mixedWithTheSdk(): Plugin[] {
  const sdkPlugin = new SdkContextOffloader({ storage: new InMemoryStorage(), evictAfterCycles: null })
  const ours = new ContextOffloader({ storage: new InMemoryStorage(5), includeRetrievalTool: false })
  return [sdkPlugin, ours]
}

/** The options of the native plugin, manual offload and native counting, as typed. */
export async function smarterOffload(text: string): Promise<{ result: OffloadResult; tokens: number }> {
  const encoding: Encoding = 'o200k_base'
  const plugin = new ContextOffloader({
    storage: new InMemoryStorage(),
    tokenizer: encoding,
    preview: 'headTail',
    headShare: 0.3,
    neverOffload: ['parse_json'],
    shouldOffload: (toolUse) => (toolUse.name === 'always_offload' ? true : undefined),
    onStorageError: 'truncate',
    exactCountLimit: 500_000,
  })
  const model = withNativeTokenCounting(new Agent().model, encoding)
  if (typeof model.countTokens !== 'function') throw new Error('countTokens lost')
  const result = await plugin.offload(text, { key: 'upload' })
  return { result, tokens: await countTokens(text, encoding) }
}

/** Opaque references and extended retrieval, typed: the stats counters and the storage reference. */
export async function opaqueOffload(text: string): Promise<{ id: string; storageReference: string | undefined; kept: number }> {
  const plugin = new ContextOffloader({ storage: new InMemoryStorage(), references: 'opaque', retrieval: 'extended', offloadErrors: true })
  const result = await plugin.offload(text, { key: 'upload', sessionId: 'user-1', toolName: 'upload' })
  const stats: OffloaderStats = plugin.stats()
  return { id: result.references[0]!.reference, storageReference: result.references[0]!.storageReference, kept: stats.tokensKeptOut }
}
`

/** The consumer's vitest test. */
const CONSUMER_TEST = `import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ContextOffloader, InMemoryStorage } from 'context-offloader'
import { agentWithFileStorage, mixedWithTheSdk, opaqueOffload, roundTrip, smarterOffload } from '../src/program.js'

const artifacts = fileURLToPath(new URL('../artifacts/', import.meta.url))

describe('context-offloader from its tarball', () => {
  it('offloads by hand with a native tokenizer and counts tokens', async () => {
    const { result, tokens } = await smarterOffload('hello world\\n'.repeat(50))
    expect(tokens).toBeGreaterThan(50)
    expect(result.references[0].reference).toBe('mem_1_upload_0')
    expect(result.text.startsWith(\`[Offloaded: 1 blocks, \${tokens} tokens]\`)).toBe(true)
  })

  it('gives opaque references and counts what it kept out', async () => {
    const { id, storageReference, kept } = await opaqueOffload('hello world\\n'.repeat(5000))
    expect(id).toMatch(/^ref_[A-Za-z0-9_-]{16}$/)
    expect(storageReference).toBe('mem_1_upload_0')
    expect(kept).toBeGreaterThan(1000)
  })

  it('round-trips a block through FileStorage under an Agent', async () => {
    const { agent, plugin, storage } = agentWithFileStorage(artifacts)
    expect(agent).toBeDefined()
    expect(plugin.name).toBe('strands:context-offloader')
    const result = await roundTrip(storage, 'hi')
    expect(result.text).toBe('hi')
    expect(result.contentType).toBe('text/plain')
    expect(readdirSync(artifacts).length).toBeGreaterThan(0)
  })

  it('round-trips a block through InMemoryStorage', async () => {
    const result = await roundTrip(new InMemoryStorage(), 'hello')
    expect(result).toMatchObject({ text: 'hello', contentType: 'text/plain' })
  })

  it('works alongside the SDK plugin', () => {
    const plugins = mixedWithTheSdk()
    expect(plugins.map((p) => p.name)).toEqual(['strands:context-offloader', 'strands:context-offloader'])
    expect(new ContextOffloader({}).getTools().length).toBeGreaterThan(0)
  })
})
`

/** A deliberate type error: tsc must reject it. */
const TYPE_ERROR = `import { ContextOffloader } from 'context-offloader'

export const plugin = new ContextOffloader({ storage: 42 })
`
