import { chmodSync, existsSync, linkSync, renameSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { backup, DatabaseSync } from 'node:sqlite'
import { codeOf, latestMigration, messageOf, partialFile, placeFile, removePartial } from './backup-files.ts'
import { Failure } from './output.ts'
import { ALL_PAGES, inspectSqlite, refuseSqliteTarget, type SqliteContents } from './sqlite-backup.ts'

/** A restore done: the backup it came from, what it holds, and where the replaced database was kept. */
export interface SqliteRestore extends SqliteContents { file: string, keptAt: string | undefined }

/**
 * Replaces the database with a checked copy of `file`. Refused while any process has the
 * database open: the service holds it from start to stop, and a file replaced under it would
 * be served from the old one while new writes went nowhere. The replaced database is kept
 * beside it as DATABASE.before-restore-TIME, 0600.
 */
export async function restoreSqlite (database: string, file: string, now = new Date()): Promise<SqliteRestore> {
  refuseSqliteTarget(database, file)
  const contents = inspectBackup(file)
  const live = existsSync(database)
  // Before the copy is written, so that a busy database costs nothing.
  if (live) settle(database)
  const partial = partialFile(database)
  try {
    const source = new DatabaseSync(file, { readOnly: true })
    try { await backup(source, partial, { rate: ALL_PAGES }) } finally { source.close() }
    if (!live) {
      // Never over a database that a service just made: link() refuses a name that is taken.
      placeFile(partial, database, false)
      return { file: resolve(file), keptAt: undefined, ...contents }
    }
    return { file: resolve(file), keptAt: swapHeld(database, partial, now), ...contents }
  } finally {
    removePartial(partial)
  }
}

function inspectBackup (file: string): SqliteContents {
  if (!existsSync(file) || !statSync(file).isFile()) throw new Failure(`${resolve(file)} is not a file`, 'cannot_read')
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    return inspectSqlite(db, resolve(file), latestMigration('sqlite'))
  } finally {
    db.close()
  }
}

/**
 * The signal that nothing has the database open: in WAL mode every open connection holds a
 * shared lock for as long as it is open, also when idle, so the exclusive lock that leaving
 * WAL mode takes is refused while the service (or any command) runs. (BEGIN EXCLUSIVE alone
 * is not enough: in WAL mode it waits only for writers.) Leaving WAL mode also moves every
 * commit still in the -wal into the file, so the file kept aside is complete on its own.
 */
function settle (database: string): void {
  const db = openLocking(database)
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE')
    db.exec('PRAGMA journal_mode = DELETE')
  } catch (error) {
    throw lockFailure(database, error)
  } finally {
    db.close()
  }
}

/**
 * Keeps the old file under its new name and puts the copy in its place while holding the
 * exclusive lock, so a service starting meanwhile fails to open it rather than serve the file
 * being put aside. The database is in rollback mode since settle(), where BEGIN EXCLUSIVE locks
 * out every reader and creates no journal to leave beside the restored file; back in WAL mode,
 * something opened it since.
 */
function swapHeld (database: string, partial: string, now: Date): string {
  const keptAt = `${resolve(database)}.before-restore-${now.toISOString().replace(/[-:]|\.\d+/g, '')}`
  const db = openLocking(database)
  try {
    try { db.exec('BEGIN EXCLUSIVE') } catch (error) { throw lockFailure(database, error) }
    // A read first: the header, which says the journal mode, is read with the lock.
    db.prepare('SELECT count(*) FROM sqlite_schema').get()
    if (db.prepare('PRAGMA journal_mode').get()?.journal_mode === 'wal') throw inUse(database)
    keepAside(database, keptAt)
    placeFile(partial, database, true)
    return keptAt
  } finally {
    if (db.isTransaction) db.exec('ROLLBACK')
    db.close()
  }
}

/** A second name for the old file, 0600; by rename where the file system has no hard links. */
function keepAside (database: string, keptAt: string): void {
  try {
    linkSync(database, keptAt)
  } catch (error) {
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK'].includes(String(codeOf(error)))) throw error
    renameSync(database, keptAt)
  }
  chmodSync(keptAt, 0o600)
}

function openLocking (database: string): DatabaseSync {
  const db = new DatabaseSync(database)
  // Never wait: a lock held now is held by a process that is running.
  db.exec('PRAGMA busy_timeout = 0')
  return db
}

const inUse = (database: string) => new Failure(`DATABASE_URL sqlite:${database} is open in another process (the service, or another command): stop it, then restore again; nothing was changed`, 'in_use')

function lockFailure (database: string, error: unknown): Failure {
  const errcode = error instanceof Error && 'errcode' in error && typeof error.errcode === 'number' ? error.errcode & 0xff : undefined
  // SQLITE_BUSY (5), SQLITE_LOCKED (6).
  if (errcode === 5 || errcode === 6) return inUse(database)
  return new Failure(`DATABASE_URL sqlite:${database} cannot be opened to replace it (${messageOf(error)}); if nothing runs on it, move it and its -wal and -shm files aside by hand, then restore again`, 'cannot_open')
}
