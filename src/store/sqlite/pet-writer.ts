import type { DatabaseSync } from 'node:sqlite'
import type { NewPet, Pet } from '../../contract/schemas.ts'
import { StoreUnavailableError } from '../store-errors.ts'
import type { IdempotencyClaim, IdempotentCreate } from '../types.ts'
import { GroupCommit } from './group-commit.ts'
import { openDatabase } from './open.ts'
import { PetWrites } from './pet-writes.ts'
import { WalSync, type SyncFile } from './wal-sync.ts'

// As long as a create waits for a write lock that another process (the CLI) holds, before 503.
const LOCK_WAIT_MS = 250

/** The connection pets are written on, opened at the first write. */
interface WriterConnection {
  commits: GroupCommit
  writes: PetWrites
  /** Present when commits are made durable apart from COMMIT (see filePetWriter). */
  wal?: WalSync
  /** The writer's own database, closed with it; absent when it writes on the store's. */
  ownDb?: DatabaseSync
}

/**
 * Where SQLite pets are written: each write runs in the next group commit (see GroupCommit)
 * and resolves once the commit that holds it is durable.
 */
export class PetWriter {
  readonly #open: () => WriterConnection
  #connection: WriterConnection | undefined
  #closed = false

  /** `open` runs at the first write: processes that only read (and start-up) never pay for it. */
  constructor (open: () => WriterConnection) {
    this.#open = open
  }

  createPet (pet: NewPet): Promise<Pet> {
    return this.#run((writes) => writes.createPet(pet), true)
  }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.#run((writes) => writes.createPetIdempotently(pet, claim), false)
  }

  /** Why writes can no longer be made durable (a failed WAL sync), if they cannot. */
  failure (): Error | undefined {
    return this.#connection?.wal?.failure
  }

  /** Commits the writes already made, waits until they are durable, and lets go. */
  async close (): Promise<void> {
    this.#closed = true
    const connection = this.#connection
    this.#connection = undefined
    if (!connection) return
    await connection.commits.drain()
    await connection.wal?.close()
    connection.ownDb?.close()
  }

  /** `oneStatement`: see GroupCommit.run. A closed writer or a failed open rejects, never throws. */
  #run<T> (write: (writes: PetWrites) => T, oneStatement: boolean): Promise<T> {
    try {
      if (this.#closed) throw new StoreUnavailableError('the store is closed')
      const { commits, writes } = this.#connection ??= this.#open()
      return commits.run(() => write(writes), oneStatement)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/**
 * The pet writer of a SQLite file: a connection of its own, in this thread, committing with
 * synchronous=NORMAL and made durable by WalSync: the commit's fsync does not hold the event
 * loop, the WAL is synced on the thread pool while requests go on being served, and each write
 * resolves once the sync after its commit has returned. (SQLite's automatic checkpoints still
 * sync on this thread.) The store's own connection and the CLI's keep synchronous=FULL.
 *
 * Its commits are visible to readers as soon as COMMIT returns, one sync before they are
 * durable: a power cut in that window can lose a pet that a listing already showed, though
 * never one whose 201 was sent.
 *
 * Where the WAL cannot be opened apart (a database not in WAL mode), the writer commits with
 * synchronous=FULL, each commit syncing itself. `syncFile` replaces fdatasync in tests.
 */
export function filePetWriter (path: string, syncFile?: SyncFile): PetWriter {
  return new PetWriter(() => openFileConnection(path, syncFile))
}

/** An in-memory database exists on one connection only: its pets are written there. */
export function sameConnectionPetWriter (db: DatabaseSync): PetWriter {
  // Opened at the first write: the statements can be prepared only once migrations have run.
  return new PetWriter(() => ({ commits: new GroupCommit(db), writes: new PetWrites(db) }))
}

function openFileConnection (path: string, syncFile: SyncFile | undefined): WriterConnection {
  const db = openDatabase(path)
  try {
    const writes = new PetWrites(db)
    const walMode = db.prepare('PRAGMA journal_mode').get()?.journal_mode === 'wal'
    // SQLite names the WAL after the path it resolved (location()), not the text it was given.
    const wal = walMode ? openWal(`${db.location()}-wal`, syncFile) : undefined
    if (!wal) return { commits: new GroupCommit(db), writes, ownDb: db }
    db.exec('PRAGMA synchronous = NORMAL')
    // Waiting for the lock happens in GroupCommit, on a timer, not inside SQLite holding the thread.
    db.exec('PRAGMA busy_timeout = 0')
    const commits = new GroupCommit(db, { durable: () => wal.durable(), lockWaitMs: LOCK_WAIT_MS })
    return { commits, writes, wal, ownDb: db }
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
