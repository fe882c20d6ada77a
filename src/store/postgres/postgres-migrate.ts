import type pg from 'pg'
import { applyMigrations } from '../migrations.ts'
import { connectClient, isOutage, unavailable, type PostgresOptions, type PostgresTarget } from './pool.ts'

// Two-key advisory lock: this constant names "petstore migrations", the second key the schema,
// so instances on different schemas of one database do not wait for each other.
const MIGRATION_LOCK = 0x7065_7473

// applied_at, as releases before postgrator wrote it, and still read by them; md5 and run_at are
// postgrator's, which leaves applied_at to its default.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), md5 TEXT, run_at TIMESTAMPTZ)`
const HAS_MD5 = `SELECT 1 FROM information_schema.columns
  WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'md5'`
// The table of an earlier release: its rows stay as they were (md5 NULL: not checked).
const ADD_COLUMNS = 'ALTER TABLE schema_migrations ALTER COLUMN applied_at SET DEFAULT now(), ADD COLUMN md5 TEXT, ADD COLUMN run_at TIMESTAMPTZ'

/** Applies the migrations not yet applied, on a connection of its own; returns their names. */
export async function migrate (target: PostgresTarget, options: PostgresOptions): Promise<string[]> {
  const client = await connectClient(target, options)
  const run = <Row extends pg.QueryResultRow = Record<string, never>>(text: string, values: unknown[] = []) => client.query<Row>(text, values)
  try {
    await run('BEGIN')
    // Held until COMMIT: instances starting together apply each migration exactly once.
    await run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, target.schema ?? ''])
    if (target.schema) await run(`CREATE SCHEMA IF NOT EXISTS ${target.schema}`)
    // postgrator writes run_at in UTC without naming the zone.
    await run("SET LOCAL TIME ZONE 'UTC'")
    await run(CREATE_TABLE)
    if ((await run(HAS_MD5)).rowCount === 0) await run(ADD_COLUMNS)
    const names = await applyMigrations({
      dialect: 'postgres',
      schema: target.schema ?? (await run<{ schema: string }>('SELECT current_schema() AS schema')).rows[0]?.schema,
      query: async (sql) => (await client.query(sql)).rows,
      script: async (sql) => { await client.query(sql) }
    })
    await run('COMMIT')
    await client.end()
    return names
  } catch (error) {
    // Closing the connection rolls the transaction back and frees the lock. Not awaited:
    // on a link that went silent the goodbye would never be replied to.
    client.end().catch(() => {})
    throw isOutage(error) ? unavailable(target, options, error) : error
  }
}
