import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadConfig } from '../config.ts'
import { describeCause, redactUrl } from '../store/store-errors.ts'
import { databaseFile, openStore, poolOptions, StoreUnavailableError } from '../store/index.ts'
import type { Store } from '../store/types.ts'
import { Failure } from './output.ts'

/** The database of DATABASE_URL, opened when a command first needs it and closed when the command ends. */
export interface CommandStore {
  /** The database as it is; commands that write call migrate() first, creating it if needed. */
  open(): Promise<Store>
  /**
   * A database that must already be there and migrated, for commands that only read or change
   * data: a mistyped DATABASE_URL is an error, not an empty result ("no keys", "no such key").
   */
  openExisting(): Promise<Store>
  close(): Promise<void>
}

const MIGRATE_FIRST = 'check it, or start the server or run "npm run --silent petstore -- migrate" first'

export function commandStore (env: Record<string, string | undefined>): CommandStore {
  let opened: Store | undefined
  const open = async (existing: boolean) => {
    // Read only when a command needs the database: a bad argument is reported before a bad setting.
    const config = loadConfig(env)
    if (existing) refuseMissingFile(config.DATABASE_URL)
    opened = await openStore(config.DATABASE_URL, poolOptions(config))
    if (existing) await requireMigratedSchema(opened, config.DATABASE_URL)
    return opened
  }
  return {
    open: () => open(false),
    openExisting: () => open(true),
    async close () { await opened?.close() }
  }
}

/** Opening a SQLite path creates the file (and the CLI's store its folder): look before opening. */
function refuseMissingFile (url: string): void {
  const path = databaseFile(url)
  if (path !== undefined && !existsSync(path)) throw new Failure(`DATABASE_URL ${url} names no database (no file at ${resolve(path)}): ${MIGRATE_FIRST}`, 'no_database')
}

async function requireMigratedSchema (store: Store, url: string): Promise<void> {
  try {
    await store.checkReady()
  } catch (error) {
    // An unreachable database is a different problem, and its message already names it.
    if (error instanceof StoreUnavailableError) throw error
    throw new Failure(`DATABASE_URL ${redactUrl(url)} is not a migrated petstore database (${describeCause(error)}): ${MIGRATE_FIRST}`, 'not_migrated')
  }
}
