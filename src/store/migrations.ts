import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Dialect } from './types.ts'

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
  // postgrator and the glob it loads stay in the heap for the process's life, and every major
  // collection marks them again (docs/performance.md): loaded only when there is work for it.
  if (await recordsEveryFile(connection, migrations)) return []
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
  return applied.map(({ version, name }) => `${String(version).padStart(3, '0')}-${name}`)
}

/**
 * Whether schema_migrations records exactly these migrations, each with its file's checksum as
 * postgrator computes it (or none, as releases before checksums wrote them): then postgrator
 * would apply nothing and refuse nothing. Anything else, postgrator decides.
 */
async function recordsEveryFile (connection: MigrationConnection, migrations: Migration[]): Promise<boolean> {
  const rows = await connection.query('SELECT version, md5 FROM schema_migrations') as Array<{ version: number | string, md5: string | null }>
  if (rows.length !== migrations.length) return false
  const recorded = new Map(rows.map((row) => [Number(row.version), row.md5]))
  return migrations.every(({ version, sql }) => {
    const md5 = recorded.get(version)
    return md5 === null || md5 === createHash('md5').update(sql, 'utf8').digest('hex')
  })
}
