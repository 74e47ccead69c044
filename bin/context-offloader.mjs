#!/usr/bin/env node
// `npx context-offloader <command>`: see lib/cli/main.js, or run with --help.
import module from 'node:module'

// Node >= 22.1 keeps the compiled code of the tool's modules on disk, which halves the
// start-up of every later run (a no-op on older versions and where the cache is off).
module.enableCompileCache?.()
const { main } = await import('../lib/cli/main.js')

process.stdout.on('error', (err) => {
  // A closed pipe (`| head`) ends the listing quietly, as other tools do.
  if (err?.code === 'EPIPE') process.exit(0)
  throw err
})
process.exitCode = await main(process.argv.slice(2))
