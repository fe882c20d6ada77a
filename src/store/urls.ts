import { redactUrl, StoreUrlError } from './store-errors.ts'
import type { Dialect } from './types.ts'

export { parsePostgresUrl, type PostgresTarget } from './postgres/url.ts'

/** What a DATABASE_URL starts with for each store; the first is the one messages name. */
const SCHEMES: Record<Dialect, readonly [string, ...string[]]> = {
  sqlite: ['sqlite:'],
  postgres: ['postgres://', 'postgresql://']
}

/** The store a DATABASE_URL names, by its scheme. */
export function dialectOf (url: string): Dialect {
  for (const [dialect, schemes] of Object.entries(SCHEMES) as Array<[Dialect, readonly string[]]>) {
    if (schemes.some((scheme) => url.startsWith(scheme))) return dialect
  }
  const named = Object.values(SCHEMES).map(([scheme]) => scheme).join(' or ')
  throw new StoreUrlError(`DATABASE_URL must start with ${named}, got ${JSON.stringify(redactUrl(url))}`)
}

/** Where a sqlite: URL points; ':memory:' for an in-memory database. */
export function sqlitePath (url: string): string {
  const path = url.slice('sqlite:'.length)
  if (path === '') throw new Error('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/petstore.db')
  return path
}

const DATABASE_FILE: Record<Dialect, (url: string) => string | undefined> = {
  sqlite: (url) => {
    const path = sqlitePath(url)
    return path === ':memory:' ? undefined : path
  },
  postgres: () => undefined
}

/** The file on this host that holds the database of DATABASE_URL; undefined for a server or memory. */
export const databaseFile = (url: string): string | undefined => DATABASE_FILE[dialectOf(url)](url)
