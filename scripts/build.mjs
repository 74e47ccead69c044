// Builds the native addon with napi-rs: `npm run build` (release) and `npm run build:debug`;
// arguments after `--` go to `napi build` (the release workflow passes `--target` and
// cross-compilation flags). The native allocator (mimalloc, through napi-rs's
// `mimalloc-safe`) is compiled with CMake on every target but Windows MSVC, so CMake is
// found first: `CMAKE`, then the PATH, then a copy installed earlier by this script.
// When there is none, the official CMake binaries are installed once from PyPI (the
// `cmake` package) into `.tools/cmake`, as `npm test` installs Garage with cargo.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const isWindows = process.platform === 'win32'
/** Where a CMake installed by this script lives (ignored by git, not packed). */
const LOCAL_DIR = join(root, '.tools', 'cmake')
const LOCAL_BIN = join(LOCAL_DIR, 'cmake', 'data', 'bin', isWindows ? 'cmake.exe' : 'cmake')

/** Whether `command --version` runs. */
function runs(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0
}

/** The CMake to build with, installing one when the machine has none. */
function ensureCmake() {
  if (process.env.CMAKE) return process.env.CMAKE
  if (runs('cmake')) return 'cmake'
  if (existsSync(LOCAL_BIN) && runs(LOCAL_BIN)) return LOCAL_BIN
  const python = ['python3', 'python'].find(runs)
  if (python) {
    console.log(`build: CMake not found; installing it from PyPI into ${LOCAL_DIR}`)
    const pip = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', LOCAL_DIR, 'cmake'], { stdio: 'inherit' })
    if (pip.status === 0 && runs(LOCAL_BIN)) return LOCAL_BIN
  }
  console.error('build: CMake is needed to build the native allocator. Install it (https://cmake.org/download/, or `pip install cmake`), or set CMAKE to its path.')
  process.exit(2)
}

const targetsMsvc = (args) => {
  const target = args[args.indexOf('--target') + 1]
  return args.includes('--target') ? /-windows-msvc$/.test(target ?? '') : isWindows
}

const extra = process.argv.slice(2)
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` }
if (!targetsMsvc(extra)) env.CMAKE = ensureCmake()
const args = ['build', '--platform', '--commonjs', '--js', 'binding.cjs', '--dts', 'binding.d.cts', ...extra]
const napi = spawnSync('napi', args, { cwd: root, env, stdio: 'inherit', shell: isWindows })
if (napi.error) {
  console.error(`build: could not run napi: ${napi.error.message}`)
  process.exit(1)
}
process.exit(napi.status ?? 1)
