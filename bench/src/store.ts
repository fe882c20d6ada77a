import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { generateApiKey } from '../../src/auth/api-key.ts'
import { openStore } from '../../src/store/index.ts'
import { bulkSeedPets } from '../../test/helpers/bulk-seed.ts'

/** A migrated, seeded store with one API key, and how to remove it. */
export interface Prepared { databaseUrl: string, key: string, cleanup(): Promise<void> }

/**
 * A fresh store of `pets` bulk-seeded pets: a SQLite file in a temporary directory, or, when
 * `base` is a postgres:// URL, a schema of its own in that database, dropped by cleanup().
 */
export async function prepareStore (pets: number, base?: string): Promise<Prepared> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
  const schema = `petstore_bench_${randomBytes(4).toString('hex')}`
  const databaseUrl = base?.startsWith('postgres') ? withSchema(base, schema) : `sqlite:${join(dir, 'petstore.db')}`
  const store = await openStore(databaseUrl)
  await store.migrate()
  const key = generateApiKey()
  await store.createApiKey({ name: 'bench', hash: key.hash, prefix: key.prefix }, { actor: 'bench', host: hostname() })
  await store.close()
  const seeded = performance.now()
  await bulkSeedPets(databaseUrl, pets)
  process.stderr.write(`seeded ${pets} pets in ${(performance.now() - seeded).toFixed(0)} ms (${databaseUrl.split(':')[0]})\n`)
  return {
    databaseUrl,
    key: key.key,
    cleanup: async () => {
      rmSync(dir, { recursive: true, force: true })
      if (!databaseUrl.startsWith('postgres')) return
      const client = new pg.Client({ connectionString: base })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await client.end()
    }
  }
}

function withSchema (url: string, schema: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('schema', schema)
  return parsed.toString()
}

/**
 * Production configuration: info logs on; rate limiting on with limits the load cannot reach
 * (set in servers.ts, with load shedding off: the load saturates the server on purpose).
 */
export function serviceEnv (databaseUrl: string): Record<string, string> {
  return { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', NODE_ENV: 'production' }
}
