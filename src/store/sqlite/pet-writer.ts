import type { DatabaseSync } from 'node:sqlite'
import { StoreUnavailableError } from '../errors.ts'
import { GroupCommit } from './group-commit.ts'
import { openDatabase } from './open.ts'
import { PetWrites, type PetWrite } from './pet-writes.ts'
import { WalSync, type SyncFile } from './wal-sync.ts'

/** Where SQLite pets are written: each write resolves once its commit is durable. */
export interface PetWriter {
  run<T>(write: PetWrite): Promise<T>
  /** Why writes can no longer be made durable (a failed WAL sync), if they cannot. */
  failure(): Error | undefined
  /** Commits the writes already made, waits until they are durable, and lets go. */
  close(): Promise<void>
}

// As long as a create waits for a write lock that another process (the CLI) holds, before 503.
const LOCK_WAIT_MS = 250

interface OpenWriter { db: DatabaseSync, commits: GroupCommit, writes: PetWrites, wal?: WalSync }

/**
 * The pet writer of a SQLite file: a connection of its own, in this thread, committing with
 * synchronous=NORMAL and made durable by WalSync: the commit's fsync does not hold the event
 * loop, the WAL is synced on the thread pool while requests go on being served, and each write
 * resolves once the sync after its commit has returned. (SQLite's automatic checkpoints, about
 * one per 1 000 WAL pages, still sync on this thread.) The store's own connection and the
 * CLI's keep synchronous=FULL.
 *
 * Its commits are visible to readers as soon as COMMIT returns, up to one sync (well under a
 * millisecond here) before they are durable: a power cut in that window can lose a pet that a
 * listing already showed, though never one whose 201 was sent.
 *
 * Where the WAL cannot be opened apart (a database not in WAL mode), the writer commits with
 * synchronous=FULL, each commit syncing itself. Opened with the first write: processes that
 * only read (and start-up) never pay for it. `syncFile` replaces fdatasync in tests.
 */
export function filePetWriter (path: string, syncFile?: SyncFile): PetWriter {
  let writer: OpenWriter | undefined
  let closed = false
  return {
    run: (write) => {
      if (closed) return Promise.reject(new StoreUnavailableError('the store is closed'))
      const { commits, writes } = writer ??= openWriter(path, syncFile)
      return commits.run(() => writes.apply(write), write.op === 'createPet') as Promise<any>
    },
    failure: () => writer?.wal?.failure,
    close: async () => {
      closed = true
      if (!writer) return
      const { db, commits, wal } = writer
      writer = undefined
      await commits.drain()
      await wal?.close()
      db.close()
    }
  }
}

function openWriter (path: string, syncFile: SyncFile | undefined): OpenWriter {
  const db = openDatabase(path)
  try {
    const walMode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode === 'wal'
    // SQLite names the WAL after the path it resolved (location()), not the text it was given.
    const wal = walMode ? openWal(`${db.location()}-wal`, syncFile) : undefined
    if (!wal) return { db, commits: new GroupCommit(db), writes: new PetWrites(db) }
    db.exec('PRAGMA synchronous = NORMAL')
    // Waiting for the lock happens in GroupCommit, on a timer, not inside SQLite holding the thread.
    db.exec('PRAGMA busy_timeout = 0')
    const commits = new GroupCommit(db, { durable: () => wal.durable(), lockWaitMs: LOCK_WAIT_MS })
    return { db, commits, writes: new PetWrites(db), wal }
  } catch (error) {
    db.close()
    throw error
  }
}

/** Undefined when the WAL cannot be opened apart: the writer then commits with FULL, which is just as durable. */
function openWal (walPath: string, syncFile: SyncFile | undefined): WalSync | undefined {
  try {
    return new WalSync(walPath, syncFile)
  } catch {
    return undefined
  }
}

/** An in-memory database exists on one connection only: its pets are written there. */
export function sameConnectionPetWriter (db: DatabaseSync): PetWriter {
  let writes: PetWrites | undefined
  const commits = new GroupCommit(db)
  return {
    // Prepared at the first write: the tables exist only once migrations have run.
    run: (write) => commits.run(() => (writes ??= new PetWrites(db)).apply(write), write.op === 'createPet') as Promise<any>,
    failure: () => undefined,
    close: () => commits.drain()
  }
}
