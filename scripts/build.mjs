// Builds the native addon with napi-rs: `npm run build` (release) and `npm run build:debug`;
// arguments after `--` go to `napi build` (the release workflow passes `--target` and
// cross-compilation flags). The native allocator is compiled with CMake (3.18 or newer)
// on every target but Windows MSVC, so CMake is found first (see ./cmake.mjs).
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureCmake, targetsMsvc } from './cmake.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))

function fail(message) {
  console.error(`build: ${message}`)
  process.exit(2)
}

const extra = process.argv.slice(2)
const env = { ...process.env }
if (!targetsMsvc(extra)) env.CMAKE = ensureCmake()
// napi's own entry point, run with this Node (no shell, so arguments pass as they are).
let napiCli
try {
  napiCli = join(dirname(createRequire(import.meta.url).resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js')
} catch {
  napiCli = undefined
}
if (!napiCli || !existsSync(napiCli)) fail("napi's command-line tool (@napi-rs/cli) is missing; run npm install first.")
env.PATH = `${join(root, 'node_modules', '.bin')}${delimiter}${env.PATH ?? ''}`
const args = [napiCli, 'build', '--platform', '--commonjs', '--js', 'binding.cjs', '--dts', 'binding.d.cts', ...extra]
const napi = spawnSync(process.execPath, args, { cwd: root, env, stdio: 'inherit' })
if (napi.error) fail(`could not run napi: ${napi.error.message}`)
process.exit(napi.status ?? 1)
