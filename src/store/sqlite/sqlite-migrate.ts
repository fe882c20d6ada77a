import type { DatabaseSync } from 'node:sqlite'
import { applyMigrations } from '../migrations.ts'
import { rollback } from './storage-failures.ts'

// applied_at, as releases before postgrator wrote it, and still read by them; md5 and run_at are
// postgrator's, which leaves applied_at to its default.
const COLUMNS = `version INTEGER PRIMARY KEY, name TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), md5 TEXT, run_at TEXT`

/**
 * Applies the migrations the database lacks; returns their names. BEGIN IMMEDIATE takes the
 * write lock first, so two processes starting together apply each migration exactly once.
 */
export async function migrate (db: DatabaseSync): Promise<string[]> {
  db.exec('BEGIN IMMEDIATE')
  try {
    prepareTable(db)
    const names = await applyMigrations({
      dialect: 'sqlite',
      query: async (sql) => db.prepare(sql).all(),
      script: async (sql) => { db.exec(sql) }
    })
    db.exec('COMMIT')
    return names
  } catch (error) {
    rollback(db)
    throw error
  }
}

/**
 * Creates schema_migrations, or gives the one of an earlier release postgrator's columns. SQLite
 * cannot give an existing column a default, so that table is copied into a new one, rows as
 * they were (md5 NULL: those migrations are not checked).
 */
function prepareTable (db: DatabaseSync): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('schema_migrations')").all().map((row) => row.name)
  if (columns.includes('md5')) return
  if (columns.length === 0) {
    db.exec(`CREATE TABLE schema_migrations (${COLUMNS})`)
    return
  }
  db.exec(`CREATE TABLE schema_migrations_next (${COLUMNS});
    INSERT INTO schema_migrations_next (version, name, applied_at) SELECT version, name, applied_at FROM schema_migrations;
    DROP TABLE schema_migrations;
    ALTER TABLE schema_migrations_next RENAME TO schema_migrations`)
}
