import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import type { PostgresOptions } from './postgres/pool.ts'
import type { Dialect } from './types.ts'
import { databaseFile, dialectOf } from './urls.ts'

export interface Migration { version: number, name: string, sql: string }

const MIGRATIONS_ROOT = new URL('../../migrations/', import.meta.url).pathname
// postgrator's form: NNN.do.name.sql. It skips a file it cannot read a version from, silently.
const FILE_NAME = /^(\d{3})\.do\.([a-z0-9-]+)\.sql$/
// postgrator's name for each store's driver: it picks the SQL of its own table by it.
const DRIVERS: Record<Dialect, 'sqlite3' | 'pg'> = { sqlite: 'sqlite3', postgres: 'pg' }

/** The versioned SQL files of one dialect, oldest first: migrations/<dialect>/NNN.do.name.sql. */
export function loadMigrations (dialect: Dialect): Migration[] {
  const folder = join(MIGRATIONS_ROOT, dialect)
  return readdirSync(folder).sort().map((file) => {
    const [, version, name] = FILE_NAME.exec(file) ?? []
    if (version === undefined || name === undefined) {
      throw new Error(`migrations/${dialect}/${file}: a migration file is named NNN.do.name.sql (a lower-case name), e.g. 001.do.initial.sql`)
    }
    return { version: Number(version), name, sql: readFileSync(join(folder, file), 'utf8') }
  })
}

/** The database was migrated by a later release than this code: it must not run on it. */
export class SchemaAheadError extends Error {
  override readonly name = 'SchemaAheadError'
  constructor (databaseVersion: number, codeVersion: number) {
    super(`the database is at migration ${databaseVersion}, this code knows up to ${codeVersion}: run a newer release or restore a backup`)
  }
}

/** One connection of a store, inside a transaction its caller holds until the migrations are done. */
export interface MigrationConnection {
  dialect: Dialect
  /** PostgreSQL: the schema the tables live in. */
  schema?: string
  /** One statement; its rows. */
  query(sql: string): Promise<unknown[]>
  /** A migration file: several statements. */
  script(sql: string): Promise<void>
}

/**
 * Applies the migrations the database lacks, in order, with postgrator, and returns their names
 * (NNN-name). schema_migrations must exist with postgrator's columns (version, name, md5,
 * run_at). Refuses a database whose latest migration is later than this code's, and one where a
 * migration already applied has another checksum than its file now.
 */
export async function applyMigrations (connection: MigrationConnection): Promise<string[]> {
  const migrations = loadMigrations(connection.dialect)
  const latest = migrations.at(-1)?.version ?? 0
  const report = compareMigrations(migrations, await connection.query('SELECT * FROM schema_migrations') as AppliedRow[])
  // postgrator and the glob it loads stay in the heap for the process's life, and every major
  // collection marks them again (docs/performance.md): loaded only when there is work for it.
  if (isCurrent(report)) return []
  // postgrator would only say "MD5 checksum failed for migration [2]", naming neither file nor fix.
  if (report.changed[0] !== undefined) throw new ChangedMigrationError(connection.dialect, report.changed[0])
  const { default: Postgrator } = await import('postgrator')
  const postgrator = new Postgrator({
    migrationPattern: join(MIGRATIONS_ROOT, connection.dialect, '*.sql'),
    driver: DRIVERS[connection.dialect],
    ...(connection.schema !== undefined && { currentSchema: connection.schema }),
    schemaTable: 'schema_migrations',
    execQuery: async (sql) => ({ rows: await connection.query(sql) }),
    execSqlScript: connection.script
  })
  const databaseVersion = await postgrator.getDatabaseVersion()
  if (databaseVersion > latest) throw new SchemaAheadError(databaseVersion, latest)
  const applied = await postgrator.migrate()
  return applied.map(migrationLabel)
}

/** A row of schema_migrations; md5 is absent from the table of releases before postgrator, and null in rows they wrote. */
export interface AppliedRow { version: number | string, name: string, md5?: string | null }

/**
 * The database's migrations against the shipped files, each list oldest first. applied: recorded
 * and shipped; pending: shipped, not recorded; unknown: recorded, but no file of that version
 * ships (a later release or another build applied it); changed: applied, but its file has another
 * checksum now than the one recorded. A row without a checksum (written before checksums) is not
 * checked.
 */
export interface MigrationReport {
  applied: Migration[]
  pending: Migration[]
  unknown: Array<{ version: number, name: string }>
  changed: Migration[]
}

export function compareMigrations (migrations: Migration[], rows: AppliedRow[]): MigrationReport {
  const recorded = new Map(rows.map((row) => [Number(row.version), row]))
  const shipped = new Set(migrations.map(({ version }) => version))
  const applied = migrations.filter(({ version }) => recorded.has(version))
  return {
    applied,
    pending: migrations.filter(({ version }) => !recorded.has(version)),
    unknown: rows.filter((row) => !shipped.has(Number(row.version)))
      .map((row) => ({ version: Number(row.version), name: row.name }))
      .sort((a, b) => a.version - b.version),
    changed: applied.filter(({ version, sql }) => {
      const md5 = recorded.get(version)?.md5
      return typeof md5 === 'string' && md5 !== checksum(sql)
    })
  }
}

/** The database is at the shipped version: every file applied as it is, nothing else applied. */
export const isCurrent = ({ pending, unknown, changed }: MigrationReport) => pending.length + unknown.length + changed.length === 0

/** NNN-name: how migrate names a migration. */
export const migrationLabel = ({ version, name }: { version: number, name: string }) => `${String(version).padStart(3, '0')}-${name}`

/** The shipped file of a migration, from the project's root. */
export const migrationFile = (dialect: Dialect, { version, name }: { version: number, name: string }) =>
  `migrations/${dialect}/${String(version).padStart(3, '0')}.do.${name}.sql`

/** The checksum postgrator records for a file. */
const checksum = (sql: string) => createHash('md5').update(sql, 'utf8').digest('hex')

/** A migration was applied from a file that has been edited since: start-up and migrate stop. */
export class ChangedMigrationError extends Error {
  override readonly name = 'ChangedMigrationError'
  constructor (dialect: Dialect, migration: Migration) {
    super(`migration ${migrationLabel(migration)} was applied to this database from other contents than ${migrationFile(dialect, migration)} has now: ` +
      'restore that file as released (a released migration is never edited; a change goes in a new migration)')
  }
}

/**
 * The rows of schema_migrations at DATABASE_URL, read without changing anything (migrate
 * --status); undefined when there is no such table, or on SQLite no file, which is not created.
 */
export async function readAppliedMigrations (url: string, options: PostgresOptions): Promise<AppliedRow[] | undefined> {
  return dialectOf(url) === 'sqlite' ? readSqliteRows(url) : await readPostgresRows(url, options)
}

/** undefined: no file, or no schema_migrations table. Read-only: a missing file is not created. */
function readSqliteRows (url: string): AppliedRow[] | undefined {
  const path = databaseFile(url)
  if (path === undefined) return undefined
  if (!existsSync(path)) return undefined
  let db: DatabaseSync | undefined
  try {
    db = new DatabaseSync(path, { readOnly: true })
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get()) return undefined
    return db.prepare('SELECT * FROM schema_migrations').all() as unknown as AppliedRow[]
  } catch (error) {
    // SQLite's own words ("file is not a database") do not say which file.
    throw new Error(`DATABASE_URL ${url} cannot be read (${resolve(path)}): ${(error as Error).message}`, { cause: error })
  } finally {
    if (db?.isOpen) db.close()
  }
}

/** undefined: no schema_migrations table in the URL's schema. In a READ ONLY transaction: nothing can change. */
async function readPostgresRows (url: string, options: PostgresOptions): Promise<AppliedRow[] | undefined> {
  // Loaded only here: a SQLite deployment never loads the PostgreSQL driver.
  const { connectClient, isOutage, parsePostgresUrl, unavailable } = await import('./postgres/pool.ts')
  const target = parsePostgresUrl(url)
  const client = await connectClient(target, options)
  const table = target.schema ? `${target.schema}.schema_migrations` : 'schema_migrations'
  try {
    await client.query('BEGIN READ ONLY')
    const { rows: [found] } = await client.query<{ table: string | null }>('SELECT to_regclass($1)::text AS table', [table])
    const rows = found?.table ? (await client.query<AppliedRow>(`SELECT * FROM ${table}`)).rows : undefined
    await client.query('ROLLBACK')
    return rows
  } catch (error) {
    throw isOutage(error) ? unavailable(target, options, error) : error
  } finally {
    await client.end().catch(() => {})
  }
}
