// Finds the CMake that compiles the native allocator (mimalloc, through napi-rs's
// `mimalloc-safe`) on every target but Windows MSVC: `CMAKE`, then the PATH, then a copy
// installed earlier here. When there is none, the official CMake binaries are installed
// once from PyPI (the `cmake` package, a prebuilt wheel) into `.tools/cmake`, as `npm
// test` installs Garage with cargo. Used by `npm run build` (scripts/build.mjs) and by
// the cargo tests of the addon crate (scripts/with-cmake.mjs), which compile it too.
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const isWindows = process.platform === 'win32'
/** Where a CMake installed by this script lives (ignored by git, not packed). */
const LOCAL_DIR = join(root, '.tools', 'cmake')
const LOCAL_BIN = join(LOCAL_DIR, 'cmake', 'data', 'bin', isWindows ? 'cmake.exe' : 'cmake')
/** The oldest CMake that mimalloc's CMakeLists.txt accepts. */
const MIN_CMAKE = [3, 18]
/** What is installed from PyPI when the machine has no CMake (prebuilt wheels only). */
const PYPI_CMAKE = 'cmake>=3.18,<5'

/** The `[major, minor]` version of the CMake at `command`, or `undefined` when it does not run. */
function cmakeVersion(command) {
  const run = spawnSync(command, ['--version'], { encoding: 'utf8' })
  // `cmake version 3.31.6`, `cmake3 version 3.20.2` (EPEL), `cmake version 3.31.6-msvc1`.
  const match = run.status === 0 ? /version (\d+)\.(\d+)/.exec(run.stdout) : null
  return match ? [Number(match[1]), Number(match[2])] : undefined
}

/** Whether `command` is a CMake recent enough for mimalloc. */
function usable(command) {
  const version = cmakeVersion(command)
  return version !== undefined && (version[0] > MIN_CMAKE[0] || (version[0] === MIN_CMAKE[0] && version[1] >= MIN_CMAKE[1]))
}

/** Whether `command` is a Python 3 with pip. */
function pythonWithPip(command) {
  return spawnSync(command, ['-c', 'import sys, pip; sys.exit(sys.version_info < (3, 7))'], { stdio: 'ignore' }).status === 0
}

function fail(message) {
  console.error(`cmake: ${message}`)
  process.exit(2)
}

/** The CMake to build with, installing one when the machine has none recent enough. */
export function ensureCmake() {
  const given = process.env.CMAKE
  if (given) {
    // cmake-rs runs it from the crate's build directory: an absolute path, checked here.
    const path = given.includes('/') || given.includes('\\') ? resolve(given) : given
    if (!usable(path)) fail(`CMAKE is set to ${given}, which is not a CMake ${MIN_CMAKE.join('.')} or newer.`)
    return path
  }
  if (usable('cmake')) return 'cmake'
  if (usable(LOCAL_BIN)) return LOCAL_BIN
  const python = ['python3', 'python'].find(pythonWithPip)
  if (python) {
    console.log(`cmake: no CMake ${MIN_CMAKE.join('.')} or newer found; installing it from PyPI into ${LOCAL_DIR}`)
    // A copy that does not run (an interrupted install) is replaced, not kept.
    rmSync(LOCAL_DIR, { recursive: true, force: true })
    const pip = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--only-binary=:all:', '--target', LOCAL_DIR, PYPI_CMAKE], { stdio: 'inherit' })
    if (pip.status === 0 && usable(LOCAL_BIN)) return LOCAL_BIN
  }
  fail(`CMake ${MIN_CMAKE.join('.')} or newer is needed to build the native allocator. Install it (https://cmake.org/download/, or \`pip install cmake\`), or set CMAKE to its path.`)
}

/** The target napi builds for: `--target` (`-t`, `--target=`), else `CARGO_BUILD_TARGET`. */
function targetOf(args) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--target' || args[i] === '-t') return args[i + 1] ?? ''
    if (args[i].startsWith('--target=')) return args[i].slice('--target='.length)
  }
  return process.env.CARGO_BUILD_TARGET || undefined
}

/** Whether the build is for Windows MSVC, where mimalloc is compiled without CMake. */
export function targetsMsvc(args) {
  const target = targetOf(args)
  if (target !== undefined) return target.endsWith('-windows-msvc')
  if (!isWindows) return false
  // The host's own target: MSVC unless the default Rust toolchain is a GNU one.
  const rustc = spawnSync('rustc', ['-vV'], { encoding: 'utf8' })
  return !/host: \S+-windows-gnu/.test(rustc.stdout ?? '')
}

