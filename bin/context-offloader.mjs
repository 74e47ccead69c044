#!/usr/bin/env node
// `npx context-offloader <command>`: see lib/cli/main.js, or run with --help.
import module from 'node:module'

// Node >= 22.1 keeps the compiled code of the tool's modules on disk, which halves the
// start-up of every later run (a no-op on older versions and where the cache is off).
// The tool's modules are imported after that, hence the dynamic import (no top-level
// await: nothing on the tool's load path waits at the top level).
module.enableCompileCache?.()

process.stdout.on('error', (err) => {
  // A closed pipe (`| head`) ends the listing quietly, as other tools do.
  if (err?.code === 'EPIPE') process.exit(0)
  throw err
})

import('../lib/cli/main.js')
  .then(({ main }) => main(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code
    },
    (err) => {
      // Only a failure to load the tool itself gets here (main reports its own errors).
      process.stderr.write(`context-offloader: error: ${String(err?.message ?? err).split('\n')[0]}\n`)
      process.exitCode = 2
    },
  )
