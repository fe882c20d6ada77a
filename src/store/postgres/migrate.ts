import type pg from 'pg'
import { loadMigrations } from '../migrations.ts'
import { connectClient, isOutage, unavailable, type PostgresOptions, type PostgresTarget } from './pool.ts'

// Two-key advisory lock: this constant names "petstore migrations", the second key the schema,
// so instances on different schemas of one database do not wait for each other.
const MIGRATION_LOCK = 0x7065_7473

/** Applies the migrations not yet applied, on a connection of its own; returns their names. */
export async function migrate (target: PostgresTarget, options: PostgresOptions): Promise<string[]> {
  const client = await connectClient(target, options)
  const run = <Row extends pg.QueryResultRow = Record<string, never>>(text: string, values: unknown[] = []) => client.query<Row>(text, values)
  try {
    await run('BEGIN')
    // Held until COMMIT: instances starting together apply each migration exactly once.
    await run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, target.schema ?? ''])
    if (target.schema) await run(`CREATE SCHEMA IF NOT EXISTS ${target.schema}`)
    await run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)')
    const applied = new Set((await run<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version))
    const names: string[] = []
    for (const migration of loadMigrations('postgres')) {
      if (applied.has(migration.version)) continue
      await run(migration.sql)
      await run('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [migration.version, migration.name])
      names.push(`${String(migration.version).padStart(3, '0')}-${migration.name}`)
    }
    await run('COMMIT')
    await client.end()
    return names
  } catch (error) {
    // Closing the connection rolls the transaction back and frees the lock. Not awaited:
    // on a link that went silent the goodbye would never be answered.
    client.end().catch(() => {})
    throw isOutage(error) ? unavailable(target, options, error) : error
  }
}
