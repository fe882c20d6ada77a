import { readFileSync } from 'node:fs'
import { Command } from 'commander'
import { backupCommand, restoreCommand } from './cli/backup.ts'
import { keysCommand } from './cli/keys-command.ts'
import { helpLayout, isClosedOutput, Refusal, reportError } from './cli/output.ts'
import { petsCommand } from './cli/pets.ts'
import { probeCommand } from './cli/probe.ts'
import { migrateCommand } from './cli/migrate.ts'
import { serveCommand } from './cli/serve.ts'
import { commandStore, type CommandStore } from './cli/command-store.ts'

/** `npm run --silent petstore -- <command>`: the service's command line. */

const FOOTER = `
Every command reads DATABASE_URL (default sqlite:./data/petstore.db). serve, migrate, keys create and
pets import create and migrate the database when needed, restore writes one from a backup, backup
and migrate --status take it as it is; the other commands need a migrated one.
Exit codes: 0 ok, 1 the operation failed, 2 the command line was wrong; migrate --status: 3 migrations
pending, 4 unknown or changed ones. Under --json a failure also prints {"error":{"code","message"}}
on stdout.`

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

export function buildProgram (env: Record<string, string | undefined>, store: CommandStore): Command {
  const program = new Command('npm run --silent petstore --')
    .usage('<command> [options]')
    .helpCommand(false)
    .version(version, '-V, --version', 'print the version and exit')
    .addHelpText('after', FOOTER)
    .addCommand(serveCommand(env))
    .addCommand(migrateCommand(store, env))
    .addCommand(keysCommand(store, env))
    .addCommand(petsCommand(store))
    .addCommand(probeCommand())
    .addCommand(backupCommand(env))
    .addCommand(restoreCommand(env))
  configure(program)
  return program
}

/** Settings are per command: commander's refusals are reported in the CLI's words (output.ts). */
function configure (command: Command): void {
  command.configureHelp(helpLayout)
    .configureOutput({ outputError: () => {} })
    .exitOverride((refusal) => { throw new Refusal(command, refusal) })
  for (const sub of command.commands) configure(sub)
}

/** Runs one command line and returns its exit code: 0 ok, 1 the operation failed, 2 the command line was wrong. */
export async function main (argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const store = commandStore(env)
  const program = buildProgram(env, store)
  if (argv.length === 0) {
    // The help is a first look, so on stdout; still exit 2, as nothing was run.
    program.outputHelp()
    return 2
  }
  let running = program
  program.hook('preAction', (_program, command) => { running = command })
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    if (isClosedOutput(error)) return 0
    // From the command line itself: a line commander refused may not have reached its options.
    return reportError(running, error, argv.includes('--json'))
  } finally {
    await store.close()
  }
}

if (import.meta.main) {
  // A closed pipe on stdout is also emitted here; the command that wrote sees it and ends (isClosedOutput).
  process.stdout.on('error', (error) => { if (!isClosedOutput(error)) throw error })
  // `serve` returns once listening and keeps running; its exit comes from the signal handlers.
  process.exitCode = await main(process.argv.slice(2), process.env)
}
