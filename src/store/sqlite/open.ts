import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

// Pets and key hashes are nobody else's business on a shared machine. SQLite gives the WAL and
// shm files the mode of the database file, so creating that one 0600 covers all three.
const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600

/**
 * Opens the file, creating its directory (0700) and the file (0600); a directory or file that
 * already exists keeps its mode. A failure (a path under a file, a directory, a file
 * that is not SQLite) names the setting, since that is what an operator fixes. Used by the
 * store's own connection and by its pet writer: both must see the same settings.
 */
export function openDatabase (path: string): DatabaseSync {
  let db: DatabaseSync | undefined
  try {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: DIRECTORY_MODE })
      createFile(path)
    }
    db = new DatabaseSync(path)
    // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so what is
    // acknowledged survives a crash or a power cut (the pet writer syncs apart from its
    // commits instead: see filePetWriter). The busy timeout covers the CLI writing while the
    // server runs; it is short because node:sqlite waits synchronously, holding its thread:
    // past it a write gets 503 and the caller retries. (The pet writer sets its own to 0
    // and waits on a timer.)
    db.exec('PRAGMA busy_timeout = 250')
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = FULL')
    db.exec('PRAGMA foreign_keys = ON')
    return db
  } catch (error) {
    if (db?.isOpen) db.close()
    throw new Error(`DATABASE_URL sqlite:${path} cannot be opened: ${deniedReason(path, error) ?? (error instanceof Error ? error.message : String(error))}`, { cause: error })
  }
}

/**
 * What to do about a folder this process may not write in, most often a container's bind mount
 * owned by root while the image runs as its own uid: the folder and the uid, not just EACCES.
 * A read-only file system (EROFS), or one that refuses even root (sysfs, procfs), is not
 * a matter of owners: chown would not help there, so it is not suggested.
 */
export function deniedReason (path: string, error: unknown, uid = process.getuid?.()): string | undefined {
  const code = error instanceof Error && 'code' in error ? error.code : undefined
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return undefined
  let folder = dirname(path)
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder)
  if (code === 'EROFS') return `${folder} is on a read-only file system (EROFS); point DATABASE_URL at a writable folder (in a container, a volume) or mount it read-write`
  if (uid === 0) return `${folder} refuses new files even to root (${code}): its file system is read-only or virtual (as /sys and /proc are); point DATABASE_URL at a folder on a writable disk`
  const owner = `${uid}:${process.getgid?.()}`
  return `${folder} or a file in it is not writable by uid ${uid} (${code}); give the folder to that user (for a bind mount, the host's folder): chown -R ${owner} ${folder}`
}

/** Creates an empty file with FILE_MODE for SQLite to open; anything already at the path is left to SQLite. */
function createFile (path: string): void {
  try {
    closeSync(openSync(path, 'wx', FILE_MODE))
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error
  }
}
