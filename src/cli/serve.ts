import { Command } from 'commander'
import { serve, startFailure } from '../server.ts'
import { print } from './output.ts'
import type { CommandStore } from './command-store.ts'

/** The service itself, and its schema for deploys that migrate before they start it. */

export function serveCommand (env: Record<string, string | undefined>): Command {
  return new Command('serve')
    .description('Serve the API (the same as npm start).')
    // Returns once listening; the server's signal handlers end the process.
    .action(async () => { await serve(env).catch(startFailure) })
}

export function migrateCommand (store: CommandStore): Command {
  return new Command('migrate')
    .description('Apply pending database migrations, then exit.')
    .usage('[--json]')
    .option('--json', 'print {"applied": [names]}')
    .action(async (options: { json?: boolean }) => {
      const applied = await (await store.open()).migrate()
      print(options.json ? JSON.stringify({ applied }) : applied.length ? `applied ${applied.join(', ')}` : 'up to date')
    })
}
