import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { backup, DatabaseSync } from 'node:sqlite'
import { expectedTables, latestMigration, messageOf, partialFile, placeFile, refuseExisting, removePartial } from './backup-files.ts'
import { Failure, UsageError } from './output.ts'

/** What a checked SQLite copy holds. */
export interface SqliteContents { migration: number, pets: number, keys: number }

/** A backup written and checked: its absolute path, its size, and what it holds. */
export interface SqliteBackup extends SqliteContents { file: string, bytes: number }

// Every page in one step, so in one read transaction: the copy is the database as of one
// moment, and the service's commits meanwhile neither restart nor tear it (WAL readers never
// block writers). The option takes no "all"; this is past any database's page count.
export const ALL_PAGES = 2 ** 31 - 1
// A reader waits only while another connection recovers or restarts the WAL.
const READ_BUSY_MS = 5000

/** Refused before anything is read: no database, or FILE that is the database itself. */
export function refuseSqliteTarget (database: string, file: string): void {
  if (database === ':memory:') throw new Failure('DATABASE_URL sqlite::memory: is a database of one process: there is nothing on disk to back up or restore', 'no_database')
  if (sameFile(database, file) || ['-wal', '-shm', '-journal'].some((suffix) => resolve(database + suffix) === resolve(file))) {
    throw new UsageError(`${resolve(file)} is the database of DATABASE_URL itself: name another file`)
  }
}

/**
 * Copies the live database to `file` with SQLite's online backup while the service runs, makes
 * the copy one self-contained file (journal mode DELETE: no -wal beside it to lose), checks it,
 * and only then gives it its name.
 */
export async function backupSqlite (database: string, file: string, force: boolean): Promise<SqliteBackup> {
  refuseSqliteTarget(database, file)
  if (!existsSync(database)) throw new Failure(`DATABASE_URL sqlite:${database} names no database (no file at ${resolve(database)})`, 'no_database')
  refuseExisting(file, force)
  const partial = partialFile(file)
  try {
    await copyLive(database, partial)
    const copy = new DatabaseSync(partial)
    let contents: SqliteContents
    try {
      copy.exec('PRAGMA journal_mode = DELETE')
      contents = inspectSqlite(copy, 'the copy')
    } finally {
      copy.close()
    }
    const bytes = statSync(partial).size
    placeFile(partial, file, force)
    return { file: resolve(file), bytes, ...contents }
  } finally {
    removePartial(partial)
  }
}

/** SQLite's online backup of the live database into `partial`; a database it cannot read fails naming it. */
async function copyLive (database: string, partial: string): Promise<void> {
  try {
    const source = new DatabaseSync(database)
    try {
      source.exec(`PRAGMA busy_timeout = ${READ_BUSY_MS}`)
      await backup(source, partial, { rate: ALL_PAGES })
    } finally {
      source.close()
    }
  } catch (error) {
    throw new Failure(`DATABASE_URL sqlite:${database} cannot be read: ${messageOf(error)}; nothing was written`, 'cannot_read')
  }
}

/**
 * PRAGMA integrity_check, then the tables its migration version needs. `name` says which file
 * a failure is about; `newest`, when given, the newest migration it may be at. A file that is
 * not SQLite fails at its first read, here.
 */
export function inspectSqlite (db: DatabaseSync, name: string, newest?: number): SqliteContents {
  try {
    const problems = db.prepare('PRAGMA integrity_check(5)').all().map((row) => String(row.integrity_check))
    if (problems.join() !== 'ok') throw new Failure(`${name} fails PRAGMA integrity_check: ${problems.join('; ')}`, 'damaged')
    const tables = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all().map((row) => String(row.name)))
    if (!tables.has('schema_migrations')) throw new Failure(`${name} is not a petstore database: it has no schema_migrations table`, 'not_petstore')
    const migration = Number(db.prepare('SELECT coalesce(max(version), 0) AS version FROM schema_migrations').get()?.version)
    if (newest !== undefined && migration > newest) {
      throw new Failure(`${name} is at migration ${migration}, ahead of this release's ${newest}: restore it with the release that wrote it`, 'ahead')
    }
    // A database ahead of this code is checked for the tables this code knows of.
    const missing = expectedTables('sqlite', Math.min(migration, latestMigration('sqlite'))).filter((table) => !tables.has(table))
    if (missing.length > 0) throw new Failure(`${name} is at migration ${migration} but lacks the tables ${missing.join(', ')}`, 'not_petstore')
    const countOf = (table: string) => Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n)
    return { migration, pets: countOf('pets'), keys: countOf('api_keys') }
  } catch (error) {
    if (error instanceof Failure) throw error
    throw new Failure(`${name} cannot be read as a SQLite database: ${messageOf(error)}`, 'damaged')
  }
}

/** The same file under two names (a link, a path written two ways), or the same path. */
function sameFile (a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true
  if (!existsSync(a) || !existsSync(b)) return false
  const [one, other] = [statSync(a), statSync(b)]
  return one.dev === other.dev && one.ino === other.ino
}
