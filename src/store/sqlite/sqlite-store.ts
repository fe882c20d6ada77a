import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { NewPet, Pet } from '../../contract/schemas.ts'
import { StorageFailureError } from '../store-errors.ts'
import { loadMigrations } from '../migrations.ts'
import { WriteHealth, type WriteStateListener } from '../write-health.ts'
import { planPetsWithIds } from '../pets-with-ids-plan.ts'
import { rollback, storageFailure } from './storage-failures.ts'
import { openDatabase } from './open.ts'
import { filePetWriter, sameConnectionPetWriter, type PetWriter } from './pet-writer.ts'
import { migrate } from './sqlite-migrate.ts'
import { createApiKey, listKeyEvents, revokeApiKey, rotateApiKey, type KeyConnection } from './sqlite-key-queries.ts'
import { int64, KEY_COLUMNS, keyFromRow, PET_COLUMNS, petFromRow } from './sqlite-rows.ts'
import type { ApiKeyRecord, IdempotencyClaim, IdempotentCreate, KeyAudit, KeyEvent, KeyEventFilter, KeyRevocation, KeyRotation, ListPetsOptions, NewApiKey, PetsWithIdsImport, Store } from '../types.ts'

// Read once: /readyz asks on every probe.
const LATEST_MIGRATION = loadMigrations('sqlite').at(-1)?.version ?? 0

/** The queries on the request path. Each must be an index range scan: a test EXPLAINs them. */
export const SQLITE_HOT_QUERIES = {
  getPet: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`,
  listPets: `SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`,
  listPetsByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
  findApiKeyByHash: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`
} as const

const KEY_CHANGES = 'SELECT version FROM api_key_changes WHERE id = 1'
// The oldest expired records first, found through the expires_at index.
const DELETE_EXPIRED_RECORDS = `DELETE FROM idempotency_records WHERE (api_key_id, idempotency_key) IN (
  SELECT api_key_id, idempotency_key FROM idempotency_records WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`

export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly idsFollowCommitOrder = true
  // What keyVersion last saw, and the version it gives.
  #lastDataVersion = 0
  #lastKeyChanges = -1n
  #version = 0
  readonly #db: DatabaseSync
  readonly #path: string
  readonly #statements = new Map<string, StatementSync>()
  readonly #petWriter: PetWriter
  readonly #dataVersion: StatementSync
  // Key changes and the key trail, in sqlite-key-queries.ts.
  readonly #keys: KeyConnection = { statement: (sql) => this.#statement(sql), transaction: (work) => this.#transaction(work) }
  // Writes after a failed WAL sync cannot be made durable, whatever succeeds in between.
  readonly #writes = new WriteHealth(() => this.#petWriter.failure())

  constructor (path: string) {
    this.#path = path
    this.#db = openDatabase(path)
    // Pets are written by a connection of their own that never holds the event loop for an
    // fsync (see filePetWriter); an in-memory database exists on one connection only.
    this.#petWriter = path === ':memory:' ? sameConnectionPetWriter(this.#db) : filePetWriter(path)
    this.#dataVersion = this.#db.prepare('PRAGMA data_version')
    this.#dataVersion.setReturnArrays(true)
  }

  /**
   * Changes whenever a key may have changed: written on this connection, or by another one
   * (the CLI, another process) as the api_key_changes counter shows. That counter is read only
   * when SQLite says another connection committed, and the pet writer's commits, most of them,
   * leave it alone: caches of keys stay exact without a time bound, and creates do not empty them.
   */
  keyVersion (): number {
    // Read as an array (see constructor): its one column is at key 0.
    const external = Number(this.#dataVersion.get()?.[0])
    if (external !== this.#lastDataVersion) {
      // Read before the change is marked seen: if the read fails, the next call reads again.
      const changes = int64(this.#statement(KEY_CHANGES).get()?.version)
      this.#lastDataVersion = external
      if (changes !== this.#lastKeyChanges) {
        this.#lastKeyChanges = changes
        this.#version++
      }
    }
    return this.#version
  }

  /** Statements are prepared once and reused; int64 columns come back as bigint. */
  #statement (sql: string): StatementSync {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.#db.prepare(sql)
      statement.setReadBigInts(true)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  /** Returns rows as arrays (see petFromRow); set once, when the statement is first prepared. */
  #arrays (sql: string): StatementSync {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.#statement(sql)
      statement.setReturnArrays(true)
    }
    return statement
  }

  #transaction<T> (work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE')
    try {
      const result = work()
      this.#db.exec('COMMIT')
      return result
    } catch (error) {
      rollback(this.#db)
      throw error
    }
  }

  /** Runs a write: a full disk, a read-only file or an I/O error become StorageFailureError (see WriteHealth). */
  #write<T> (write: () => Promise<T>): Promise<T> {
    return this.#writes.track(write, (error) => {
      const reason = storageFailure(error)
      return reason === undefined ? undefined : new StorageFailureError(`SQLite at ${this.#path} cannot write: ${reason}`, { cause: error })
    })
  }

  watchWrites (listener: WriteStateListener): void {
    this.#writes.watch(listener)
  }

  /**
   * A write that changes nothing yet goes to the WAL, to learn whether writes work again: the
   * header's user_version set to its own value (SQLite skips an UPDATE to the same value).
   */
  #probeWrite (): void {
    const version = Number(this.#db.prepare('PRAGMA user_version').get()?.user_version)
    this.#db.exec(`PRAGMA user_version = ${version}`)
  }

  migrate (): Promise<string[]> {
    return migrate(this.#db)
  }

  underFirstKeyLock<T> (fn: () => Promise<T>): Promise<T> {
    return fn()
  }

  async checkReady (): Promise<void> {
    const row = this.#statement('SELECT max(version) AS version FROM schema_migrations').get()
    if (Number(row?.version ?? 0) < LATEST_MIGRATION) throw new Error('database schema is behind: run migrations')
    const failure = this.#petWriter.failure()
    if (failure) throw new Error('a sync of the WAL failed: restart the process to recover what is on disk', { cause: failure })
    if (this.#writes.failure) await this.#write(async () => { this.#probeWrite() })
  }

  createPet (pet: NewPet): Promise<Pet> {
    return this.#write(() => this.#petWriter.createPet(pet))
  }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.#write(() => this.#petWriter.createPetIdempotently(pet, claim))
  }

  deleteExpiredIdempotencyRecords (now: string, limit: number): Promise<number> {
    return this.#write(async () => Number(this.#statement(DELETE_EXPIRED_RECORDS).run(now, limit).changes))
  }

  getPet (id: bigint): Pet | undefined {
    const row = this.#arrays(SQLITE_HOT_QUERIES.getPet).get(id)
    return row && petFromRow(row)
  }

  async listPets ({ limit, status, afterId }: ListPetsOptions): Promise<Pet[]> {
    const after = afterId ?? 0n
    const rows = status === undefined
      ? this.#arrays(SQLITE_HOT_QUERIES.listPets).all(after, limit)
      : this.#arrays(SQLITE_HOT_QUERIES.listPetsByStatus).all(status, after, limit)
    return rows.map(petFromRow)
  }

  async countPets (): Promise<number> {
    return Number(this.#statement('SELECT count(*) AS n FROM pets').get()?.n)
  }

  createApiKey (key: NewApiKey, audit: KeyAudit): Promise<ApiKeyRecord> {
    return this.#write(async () => createApiKey(this.#keys, key, audit))
  }

  async findApiKeyByHash (hash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.#statement(SQLITE_HOT_QUERIES.findApiKeyByHash).get(hash)
    return row && keyFromRow(row)
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return this.#statement(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`).all().map(keyFromRow)
  }

  revokeApiKey (id: number, audit: KeyAudit): Promise<KeyRevocation> {
    this.#version++
    return this.#write(async () => revokeApiKey(this.#keys, id, audit))
  }

  async listKeyEvents (filter: KeyEventFilter): Promise<KeyEvent[]> {
    return listKeyEvents(this.#keys, filter)
  }

  touchApiKey (id: number, at: string): Promise<void> {
    return this.#write(async () => { this.#statement('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at, id) })
  }

  async countApiKeys (): Promise<number> {
    return Number(this.#statement('SELECT count(*) AS n FROM api_keys').get()?.n)
  }

  insertPets (pets: NewPet[]): Promise<number> {
    // Synchronous from BEGIN to COMMIT on this connection; the pet writer waits for the lock.
    return this.#write(async () => this.#transaction(() => {
      const insert = this.#statement('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)')
      for (const pet of pets) insert.run(pet.name, pet.categoryId, pet.status ?? null)
      return pets.length
    }))
  }

  insertPetsWithIds (pets: Pet[]): Promise<PetsWithIdsImport> {
    return this.#write(async () => this.#transaction((): PetsWithIdsImport => {
      const get = this.#arrays(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`)
      const stored = new Map<bigint, Pet>()
      for (const { id } of pets) {
        const row = get.get(id)
        if (row) stored.set(id, petFromRow(row))
      }
      // AUTOINCREMENT keeps the largest id ever assigned here, also after that pet is gone.
      const highest = this.#statement("SELECT coalesce(max(seq), 0) AS seq FROM sqlite_sequence WHERE name = 'pets'").get()?.seq
      const plan = planPetsWithIds(pets, stored, int64(highest ?? 0n))
      if ('outcome' in plan) return plan
      const insert = this.#statement('INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)')
      for (const pet of plan.insert) insert.run(pet.id, pet.name, pet.categoryId, pet.status ?? null)
      return { outcome: 'written', inserted: plan.insert.length, skipped: plan.skipped }
    }))
  }

  rotateApiKey (oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string, audit: KeyAudit): Promise<KeyRotation> {
    this.#version++
    return this.#write(async () => rotateApiKey(this.#keys, oldId, newKey, oldExpiresAt, now, audit))
  }

  async close (): Promise<void> {
    await this.#petWriter.close()
    if (this.#db.isOpen) this.#db.close()
  }
}
