import type { DatabaseSync } from 'node:sqlite'
import { GroupCommit } from './group-commit.ts'
import { openDatabase } from './sqlite-open.ts'
import { PetWrites, type PetWrite } from './sqlite-pet-writes.ts'
import { WalSync, type SyncFile } from './wal-sync.ts'

/** Where SQLite pets are written: each write resolves once its commit is durable. */
export interface PetWriter {
  run<T>(write: PetWrite): Promise<T>
  /** Commits the writes already made, waits until they are durable, and lets go. */
  close(): Promise<void>
}

// As long as a create waits for a write lock that another process (the CLI) holds, before 503.
const LOCK_WAIT_MS = 250

/**
 * The pet writer of a SQLite file: a connection of its own, in this thread, committing with
 * synchronous=NORMAL and made durable by WalSync, so no fsync ever holds the event loop: the
 * WAL is synced on the thread pool while requests go on being served, and each write resolves
 * once the sync after its commit has returned. Connections of the CLI and the store's own
 * connection keep synchronous=FULL.
 *
 * Its commits are visible to readers as soon as COMMIT returns, up to one sync (well under a
 * millisecond here) before they are durable: a power cut in that window can lose a pet that a
 * listing already showed, though never one whose 201 was sent.
 *
 * Opened with the first write: processes that only read (and start-up) never pay for it.
 * `syncFile` replaces fdatasync in tests.
 */
export function filePetWriter (path: string, syncFile?: SyncFile): PetWriter {
  let writer: { db: DatabaseSync, commits: GroupCommit, writes: PetWrites, wal?: WalSync } | undefined
  const open = () => {
    const db = openDatabase(path)
    const walMode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode === 'wal'
    // Only a WAL can be synced apart from its commit; in any other mode, the commit syncs.
    const wal = walMode ? new WalSync(`${path}-wal`, syncFile) : undefined
    if (wal) db.exec('PRAGMA synchronous = NORMAL')
    // Waiting for the lock happens in GroupCommit, on a timer, not inside SQLite holding the thread.
    db.exec('PRAGMA busy_timeout = 0')
    const commits = new GroupCommit(db, { durable: wal && (() => wal.durable()), lockWaitMs: LOCK_WAIT_MS })
    return { db, commits, writes: new PetWrites(db), wal }
  }
  return {
    run: (write) => {
      const { commits, writes } = writer ??= open()
      return commits.run(() => writes.apply(write), write.op === 'createPet') as Promise<any>
    },
    close: async () => {
      if (!writer) return
      const { db, commits, wal } = writer
      writer = undefined
      await commits.drain()
      await wal?.close()
      db.close()
    }
  }
}

/** An in-memory database exists on one connection only: its pets are written there. */
export function sameConnectionPetWriter (db: DatabaseSync): PetWriter {
  let writes: PetWrites | undefined
  const commits = new GroupCommit(db)
  return {
    // Prepared at the first write: the tables exist only once migrations have run.
    run: (write) => commits.run(() => (writes ??= new PetWrites(db)).apply(write), write.op === 'createPet') as Promise<any>,
    close: () => commits.drain()
  }
}
