import { SqliteStore, sqlitePath } from './sqlite.ts'
import type { Store } from './types.ts'

export type { Store } from './types.ts'

export class StoreUrlError extends Error {}

/** Picks the adapter by the URL's scheme. */
export async function openStore (url: string): Promise<Store> {
  if (url.startsWith('sqlite:')) return new SqliteStore(sqlitePath(url))
  throw new StoreUrlError(`DATABASE_URL must start with sqlite: or postgres://, got ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//***@'))}`)
}
