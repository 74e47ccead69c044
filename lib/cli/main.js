// The command-line tool: `context-offloader <command> [options]`. Arguments are parsed
// with node:util parseArgs (strict: unknown options are errors); every failure is one
// line on stderr and exit code 2; `grep` exits 1 when nothing matched.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { UsageError, oneLine } from './errors.js'
import { colourOn, Output, printable, styles } from './terminal.js'

const PROGRAM = 'context-offloader'
/**
 * Every command, in the order `--help` lists them. A command's module (its options, help
 * and work) is loaded only when it runs, so a run loads what it uses and nothing else.
 */
export const COMMANDS = [
  { name: 'ls', summary: 'list artifacts: reference, content type, bytes, session, created, expires', load: async () => (await import('./commands/ls.js')).ls },
  { name: 'show', summary: "print an artifact's content", load: async () => (await import('./commands/show.js')).show },
  { name: 'grep', summary: "search an artifact as the agent's retrieval tool does", load: async () => (await import('./commands/grep.js')).grep },
  { name: 'stats', summary: 'artifacts and bytes, overall and per session', load: async () => (await import('./commands/stats.js')).stats },
  { name: 'gc', summary: "remove expired, old, or one session's artifacts, or keep a store under a size", load: async () => (await import('./commands/gc.js')).gc },
  { name: 'sessions', summary: 'list, show or remove SessionManager snapshot sessions', load: async () => (await import('./commands/sessions.js')).sessions },
  {
    name: 'mcp',
    summary: "an MCP proxy that offloads an upstream server's large tool results",
    load: async () => {
      // The proxy holds results of many megabytes for a moment each: the native
      // allocator commits memory as it is used rather than ahead, which keeps the
      // process about 40 MB smaller (set before the addon loads; an explicit setting
      // wins; the upstream inherits it with the rest of the environment).
      process.env.MIMALLOC_ARENA_EAGER_COMMIT ??= '0'
      return (await import('./commands/mcp.js')).mcp
    },
  },
]

function version() {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
}

function mainHelp() {
  const width = Math.max(...COMMANDS.map((c) => c.name.length))
  return [
    `${PROGRAM} ${version()}: look after the artifacts offloaded by ContextOffloader, or run the MCP proxy`,
    '',
    `Usage: ${PROGRAM} <command> [options]`,
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'STORE is a directory of a FileStorage or s3://bucket/prefix of an S3Storage.',
    `Run \`${PROGRAM} <command> --help\` for a command's options.`,
    'Exit status: 0 on success, 1 when grep found nothing, 2 on errors.',
  ].join('\n')
}

function commandHelp(command) {
  return [`Usage: ${PROGRAM} ${command.usage}`, '', ...command.help, '  -h, --help         this help'].join('\n')
}

/**
 * One line for a failure: what the user can act on. S3's answers for a missing bucket and
 * refused credentials are named as such.
 */
export function describeFailure(err) {
  const line = oneLine(err)
  if (err instanceof UsageError) return line
  if (/NoSuchBucket/.test(line)) return `no such bucket (${line})`
  if (/InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|Forbidden|ExpiredToken|credentials/i.test(line)) return `S3 refused the credentials (${line})`
  return line
}

/**
 * Runs the tool on `argv` (without `node` and the script) and resolves with its exit code.
 * @param {string[]} argv
 */
export async function main(argv) {
  const out = new Output()
  const fail = (message) => {
    const red = styles(colourOn(process.stderr)).red
    // Every message is printed escaped (an unknown command or option echoes what was typed).
    process.stderr.write(`${PROGRAM}: ${red('error:')} ${printable(message)}\n`)
    return 2
  }
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${mainHelp()}\n`)
    return name === undefined ? 2 : 0
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${version()}\n`)
    return 0
  }
  const listed = COMMANDS.find((c) => c.name === name)
  if (!listed) return fail(`unknown command '${name}' (run \`${PROGRAM} --help\`)`)
  let command
  try {
    command = await listed.load()
  } catch (err) {
    // The command's modules did not load: the native binary is missing, most often.
    return fail(describeFailure(err))
  }
  let parsed
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (err) {
    return fail(`${name}: ${oneLine(err).replace(/ To specify a positional argument.*$/, '')}`)
  }
  if (parsed.values.help) {
    process.stdout.write(`${commandHelp(command)}\n`)
    return 0
  }
  if (!command.variadic && command.name !== 'sessions' && parsed.positionals.length !== command.positionals.length) {
    return fail(`${name}: expected ${command.positionals.join(' ')} (usage: ${PROGRAM} ${command.usage})`)
  }
  try {
    const code = await command.run({ values: parsed.values, positionals: parsed.positionals, out })
    await out.end()
    return code
  } catch (err) {
    await out.end()
    return fail(describeFailure(err))
  }
}
