// Runs a command with `CMAKE` set to the CMake that compiles the native allocator (see
// ./cmake.mjs), as `npm run build` does: `node scripts/with-cmake.mjs cargo test ...`.
// The cargo tests of the addon crate compile mimalloc too, in their own profile.
import { spawnSync } from 'node:child_process'
import { ensureCmake, targetsMsvc } from './cmake.mjs'

const [command, ...args] = process.argv.slice(2)
if (!command) {
  console.error('with-cmake: usage: node scripts/with-cmake.mjs <command> [arguments...]')
  process.exit(2)
}
const env = { ...process.env }
if (!targetsMsvc([])) env.CMAKE = ensureCmake()
const run = spawnSync(command, args, { env, stdio: 'inherit' })
if (run.error) {
  console.error(`with-cmake: could not run ${command}: ${run.error.message}`)
  process.exit(2)
}
process.exit(run.status ?? 1)
