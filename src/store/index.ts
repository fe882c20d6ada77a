import type { PostgresOptions } from './postgres/postgres-store.ts'
import type { Dialect, Store } from './types.ts'
import { dialectOf, sqlitePath } from './urls.ts'

export type { Dialect, Store } from './types.ts'
export { StoreUnavailableError, StoreUrlError } from './store-errors.ts'
export { databaseFile, dialectOf, parsePostgresUrl, sqlitePath } from './urls.ts'

/**
 * How each store is opened. Each adapter is loaded only when used, so a SQLite deployment
 * never loads the PostgreSQL driver.
 */
const ADAPTERS: Record<Dialect, (url: string, options: PostgresOptions) => Promise<Store>> = {
  async sqlite (url) {
    const { SqliteStore } = await import('./sqlite/sqlite-store.ts')
    return new SqliteStore(sqlitePath(url))
  },
  async postgres (url, options) {
    const { PostgresStore } = await import('./postgres/postgres-store.ts')
    return new PostgresStore(url, options)
  }
}

/** Picks the adapter by the URL's scheme; the options apply to PostgreSQL's pool. */
export async function openStore (url: string, options: PostgresOptions = {}): Promise<Store> {
  return ADAPTERS[dialectOf(url)](url, options)
}

/** The pool settings of a loaded Config, for openStore. */
export function poolOptions (config: { DATABASE_POOL_MAX: number, DATABASE_STATEMENT_TIMEOUT_MS: number, DATABASE_CONNECT_TIMEOUT_MS: number }): PostgresOptions {
  return {
    poolMax: config.DATABASE_POOL_MAX,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS
  }
}
