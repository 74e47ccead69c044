// Installs the npm dependencies when they are missing (a fresh clone), so that
// `npm test` works as the first command after `git clone`. Does nothing when
// node_modules is already installed. Runs on the machine's Node (>= 20).
//
// With a package-lock.json it runs `npm ci`. `npm ci` refuses a lockfile that
// lacks entries npm wants to add, which happens when the registry cannot serve
// every platform's optional packages (for instance the `context-offloader-*`
// platform packages before their first publish). In that case it falls back to
// `npm install`, which still installs the locked versions.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const installed = join(root, 'node_modules', '.package-lock.json')

if (existsSync(installed) && process.argv[2] !== '--force') {
  process.exit(0)
}

/** Runs npm with the given arguments in the package root; returns its exit status. */
function npm(args) {
  const execPath = process.env.npm_execpath
  const [command, commandArgs] =
    execPath && /\.[cm]?js$/.test(execPath) ? [process.execPath, [execPath, ...args]] : ['npm', args]
  console.log(`ensure-deps: npm ${args.join(' ')}`)
  const result = spawnSync(command, commandArgs, {
    cwd: root,
    stdio: 'inherit',
    shell: command === 'npm' && process.platform === 'win32',
  })
  if (result.error) throw result.error
  return result.status ?? 1
}

const flags = ['--no-audit', '--no-fund']
let status
if (existsSync(join(root, 'package-lock.json'))) {
  status = npm(['ci', ...flags])
  if (status !== 0) {
    console.log('ensure-deps: `npm ci` failed (lockfile not installable as is); retrying with `npm install`')
    status = npm(['install', ...flags])
  }
} else {
  status = npm(['install', ...flags])
}
process.exit(status)
