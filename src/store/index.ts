import { redactUrl, StoreUrlError } from './store-errors.ts'
import type { PostgresOptions } from './postgres/postgres-store.ts'
import type { Store } from './types.ts'

export type { Store } from './types.ts'
export { StoreUnavailableError, StoreUrlError } from './store-errors.ts'

/**
 * Picks the adapter by the URL's scheme; the options apply to PostgreSQL's pool. Each adapter
 * is loaded only when used, so a SQLite deployment never loads the PostgreSQL driver.
 */
export async function openStore (url: string, options: PostgresOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) {
    const { SqliteStore, sqlitePath } = await import('./sqlite/sqlite-store.ts')
    return new SqliteStore(sqlitePath(url))
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { PostgresStore } = await import('./postgres/postgres-store.ts')
    return new PostgresStore(url, options)
  }
  throw new StoreUrlError(`DATABASE_URL must start with sqlite: or postgres://, got ${JSON.stringify(redactUrl(url))}`)
}

/** The pool settings of a loaded Config, for openStore. */
export function poolOptions (config: { DATABASE_POOL_MAX: number, DATABASE_STATEMENT_TIMEOUT_MS: number, DATABASE_CONNECT_TIMEOUT_MS: number }): PostgresOptions {
  return {
    poolMax: config.DATABASE_POOL_MAX,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS
  }
}
