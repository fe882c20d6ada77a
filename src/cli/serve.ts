import { Command } from 'commander'
import { serve, startFailure } from '../server.ts'

/** The service itself, in the foreground. */

export function serveCommand (env: Record<string, string | undefined>): Command {
  return new Command('serve')
    .description('Serve the API (the same as npm start).')
    // Returns once listening; the server's signal handlers end the process.
    .action(async () => { await serve(env).catch(startFailure) })
}
