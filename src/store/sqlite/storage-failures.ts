import type { DatabaseSync } from 'node:sqlite'

// Primary result codes of SQLite for a storage that cannot take a write: SQLITE_READONLY (8),
// SQLITE_IOERR (10, with its extended codes), SQLITE_FULL (13), SQLITE_CANTOPEN (14: the
// writer's connection, opened at the first write, cannot open its files).
const SQLITE_STORAGE_FAILURES = new Set([8, 10, 13, 14])
// The system's words for the same, from the WAL's own sync.
const SYSTEM_STORAGE_FAILURES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO'])

/**
 * The driver's one-line reason when error, or one of its causes, is a failure of the storage
 * (disk full, read-only, I/O error) rather than a bug; undefined otherwise.
 */
export function storageFailure (error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ('errcode' in cause && typeof cause.errcode === 'number' && SQLITE_STORAGE_FAILURES.has(cause.errcode & 0xff)) return cause.message
    if ('code' in cause && typeof cause.code === 'string' && SYSTEM_STORAGE_FAILURES.has(cause.code)) return cause.message
  }
  return undefined
}

/**
 * Ends the open transaction, if SQLite has not ended it already (it does on a full disk or an
 * I/O error). A rollback that fails as well leaves nothing to do: the error being handled is
 * the one to report.
 */
export function rollback (db: DatabaseSync): void {
  try {
    if (db.isTransaction) db.exec('ROLLBACK')
  } catch {}
}
