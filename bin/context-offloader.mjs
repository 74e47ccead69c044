#!/usr/bin/env node
// `npx context-offloader <command>`: see lib/cli/main.js, or run with --help.
import { main } from '../lib/cli/main.js'

process.stdout.on('error', (err) => {
  // A closed pipe (`| head`) ends the listing quietly, as other tools do.
  if (err?.code === 'EPIPE') process.exit(0)
  throw err
})
process.exitCode = await main(process.argv.slice(2))
