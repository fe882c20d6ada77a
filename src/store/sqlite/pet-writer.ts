import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { NewPet, Pet } from '../../contract/schemas.ts'
import { StoreUnavailableError } from '../store-errors.ts'
import type { IdempotencyClaim, IdempotentCreate, PetWrites } from '../types.ts'
import { GroupCommit } from './group-commit.ts'
import { openDatabase } from './open.ts'
import { int64, PET_COLUMNS, petFromRow, text } from './sqlite-rows.ts'
import { WalSync, type SyncFile } from './wal-sync.ts'

// As long as a create waits for a write lock that another process (the CLI) holds, before 503.
const LOCK_WAIT_MS = 250

/** The connection pets are written on, opened at the first write. */
interface WriterConnection {
  commits: GroupCommit
  statements: PetStatements
  /** Present when commits are made durable apart from COMMIT (see filePetWriter). */
  wal?: WalSync
  /** The writer's own database, closed with it; absent when it writes on the store's. */
  ownDb?: DatabaseSync
}

/**
 * Where SQLite pets are written: each write runs in the next group commit (see GroupCommit)
 * and resolves once the commit that holds it is durable.
 */
export class PetWriter implements PetWrites {
  readonly #open: () => WriterConnection
  #connection: WriterConnection | undefined
  #closed = false

  /** `open` runs at the first write: processes that only read (and start-up) never pay for it. */
  constructor (open: () => WriterConnection) {
    this.#open = open
  }

  createPet (pet: NewPet): Promise<Pet> {
    return this.#run((statements) => statements.createPet(pet), true)
  }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.#run((statements) => statements.createPetIdempotently(pet, claim), false)
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
  #run<T> (write: (statements: PetStatements) => T, oneStatement: boolean): Promise<T> {
    try {
      if (this.#closed) throw new StoreUnavailableError('the store is closed')
      const { commits, statements } = this.#connection ??= this.#open()
      return commits.run(() => write(statements), oneStatement)
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
  return new PetWriter(() => ({ commits: new GroupCommit(db), statements: new PetStatements(db) }))
}

function openFileConnection (path: string, syncFile: SyncFile | undefined): WriterConnection {
  const db = openDatabase(path)
  try {
    const statements = new PetStatements(db)
    const walMode = db.prepare('PRAGMA journal_mode').get()?.journal_mode === 'wal'
    // SQLite names the WAL after the path it resolved (location()), not the text it was given.
    const wal = walMode ? openWal(`${db.location()}-wal`, syncFile) : undefined
    if (!wal) return { commits: new GroupCommit(db), statements, ownDb: db }
    db.exec('PRAGMA synchronous = NORMAL')
    // Waiting for the lock happens in GroupCommit, on a timer, not inside SQLite holding the thread.
    db.exec('PRAGMA busy_timeout = 0')
    const commits = new GroupCommit(db, { durable: () => wal.durable(), lockWaitMs: LOCK_WAIT_MS })
    return { commits, statements, wal, ownDb: db }
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

/**
 * The SQL of the two pet writes. Each method is one synchronous step that PetWriter runs
 * inside a group-commit transaction (see GroupCommit): no other write runs in between.
 */
class PetStatements {
  readonly #insert: StatementSync
  readonly #insertReturningRow: StatementSync
  readonly #findRecord: StatementSync
  readonly #getPet: StatementSync
  readonly #upsertRecord: StatementSync

  constructor (db: DatabaseSync) {
    const prepare = (sql: string, arrays = false) => {
      const statement = db.prepare(sql)
      statement.setReadBigInts(true)
      statement.setReturnArrays(arrays)
      return statement
    }
    // run() gives the new rowid: a RETURNING clause would make SQLite build a result row for it.
    this.#insert = prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)')
    this.#insertReturningRow = prepare(`INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`, true)
    this.#findRecord = prepare('SELECT fingerprint, pet_id, expires_at FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?')
    this.#getPet = prepare(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`, true)
    // api_key_id holds the key's lineage (see migration key-lineage). An expired record is
    // replaced: the key starts a new life with this request.
    this.#upsertRecord = prepare(`INSERT INTO idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id,
        created_at = excluded.created_at, expires_at = excluded.expires_at`)
  }

  /** One statement: SQLite undoes it alone if it fails, so it needs no savepoint. */
  createPet (pet: NewPet): Pet {
    const { lastInsertRowid } = this.#insert.run(pet.name, pet.categoryId, pet.status ?? null)
    return { id: BigInt(lastInsertRowid), ...pet }
  }

  /**
   * Several statements, run in a savepoint of their own. A second request with the same key,
   * even in the same batch, finds this record; the pet and its record commit or vanish together.
   */
  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): IdempotentCreate {
    const existing = this.#findRecord.get(claim.keyLineageId, claim.key)
    if (existing && text(existing.expires_at) > claim.now) {
      if (text(existing.fingerprint) !== claim.fingerprint) return { outcome: 'conflict' }
      const replayed = this.#getPet.get(int64(existing.pet_id))
      // The foreign key keeps a recorded pet in place; only a database edited by hand lacks it.
      if (!replayed) throw new Error('an idempotency record points to a pet that is gone')
      return { outcome: 'replayed', pet: petFromRow(replayed) }
    }
    const created = this.#insertReturningRow.get(pet.name, pet.categoryId, pet.status ?? null)
    if (!created) throw new Error('INSERT … RETURNING returned no row')
    const createdPet = petFromRow(created)
    this.#upsertRecord.run(claim.keyLineageId, claim.key, claim.fingerprint, createdPet.id, claim.now, claim.expiresAt)
    return { outcome: 'created', pet: createdPet }
  }
}
