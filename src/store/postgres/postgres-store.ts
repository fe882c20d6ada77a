import type { NewPet, Pet } from '../../contract/schemas.ts'
import { loadMigrations } from '../migrations.ts'
import { StorageFailureError } from '../store-errors.ts'
import { WriteHealth, type WriteStateListener } from '../write-health.ts'
import { Connections } from './pooled-connections.ts'
import { createPetIdempotently, deleteExpiredIdempotencyRecords } from './idempotency-records.ts'
import { countApiKeys, createApiKey, listApiKeys, listKeyEvents, revokeApiKey, rotateApiKey, touchApiKey } from './postgres-key-queries.ts'
import { migrate } from './postgres-migrate.ts'
import { insertPetsWithIds } from './pets-with-ids.ts'
import { connectClient, parsePostgresUrl, type PostgresOptions } from './pool.ts'
import { KEY_COLUMNS, keyFromRow, PET_COLUMNS, petFromRow, type KeyRow, type PetRow } from './postgres-rows.ts'
import { PetInsertBatcher } from './writes.ts'
import type { ApiKeyRecord, IdempotencyClaim, IdempotentCreate, KeyAudit, KeyEvent, KeyEventFilter, KeyRevocation, KeyRotation, ListPetsOptions, NewApiKey, PetsWithIdsImport, PoolFigures, Store } from '../types.ts'

export type { PostgresOptions } from './pool.ts'

// Read once: /readyz asks on every probe.
const LATEST_MIGRATION = loadMigrations('postgres').at(-1)?.version ?? 0
/** The statements on the request path; a test checks each is an index scan. */
export const POSTGRES_HOT_QUERIES = {
  getPet: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1`,
  listPets: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
  listPetsByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
  findApiKeyByHash: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`
} as const

// Two-key advisory lock, like the migrations' (postgres-migrate.ts): this constant names
// "first key", the second key the schema.
const FIRST_KEY_LOCK = 0x6b65_7931

// A write that changes nothing but is still written: whether writes work again.
const PROBE_WRITE = 'UPDATE schema_migrations SET applied_at = applied_at WHERE version = (SELECT max(version) FROM schema_migrations)'

/**
 * The Store on PostgreSQL: reads and pets here, keys in postgres-key-queries.ts, idempotent
 * creates in idempotency-records.ts, schema changes in postgres-migrate.ts; every statement
 * goes through Connections.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres'
  // Pet inserts hold one advisory lock to their commit (see writes.ts).
  readonly idsFollowCommitOrder = true
  readonly #options: PostgresOptions
  readonly #db: Connections
  readonly #inserts: PetInsertBatcher
  readonly #writes = new WriteHealth()

  constructor (url: string, options: PostgresOptions = {}) {
    this.#options = options
    this.#db = new Connections(parsePostgresUrl(url), options)
    this.#inserts = new PetInsertBatcher(async (text, values) => (await this.#db.query<{ id: string }>(text, values, this.#db.insertPool)).rows, this.#db.target.schema ?? '')
  }

  /** Runs a write: a full disk, a read-only database or an I/O error mark writes failing (see WriteHealth). */
  #write<T> (write: () => Promise<T>): Promise<T> {
    return this.#writes.track(write, (error) => error instanceof StorageFailureError ? error : undefined)
  }

  watchWrites (listener: WriteStateListener): void {
    this.#writes.watch(listener)
  }

  migrate (): Promise<string[]> {
    return migrate(this.#db.target, this.#options)
  }

  /** Held on a connection of its own, as the migrations' lock is, and freed when it ends. */
  async underFirstKeyLock<T> (fn: () => Promise<T>): Promise<T> {
    const target = this.#db.target
    // The migrations' connection: on a multi-host URL, to the host that takes writes.
    const client = await connectClient(target, this.#options)
    try {
      await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [FIRST_KEY_LOCK, target.schema ?? ''])
      return await fn()
    } finally {
      await client.end()
    }
  }

  async checkReady (): Promise<void> {
    // With target_session_attrs, ready means the host in use takes writes: after a failover,
    // not ready until connections reach the new primary.
    const version = this.#db.target.sessionAttrs === undefined
      ? Number((await this.#db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')).rows[0]?.version ?? 0)
      : await this.#db.writableVersion()
    if (version < LATEST_MIGRATION) throw new Error('database schema is behind: run migrations')
    if (this.#writes.failure) await this.#write(() => this.#db.query(PROBE_WRITE))
  }

  createPet (pet: NewPet): Promise<Pet> {
    return this.#write(() => this.#inserts.insert(pet))
  }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.#write(() => createPetIdempotently(this.#db, pet, claim))
  }

  deleteExpiredIdempotencyRecords (now: string, limit: number): Promise<number> {
    return this.#write(() => deleteExpiredIdempotencyRecords(this.#db, now, limit))
  }

  async getPet (id: bigint): Promise<Pet | undefined> {
    const { rows } = await this.#db.query<PetRow>(POSTGRES_HOT_QUERIES.getPet, [id])
    return rows[0] && petFromRow(rows[0])
  }

  async listPets ({ limit, status, afterId }: ListPetsOptions): Promise<Pet[]> {
    const after = afterId ?? -(2n ** 63n)
    const { rows } = status === undefined
      ? await this.#db.query<PetRow>(POSTGRES_HOT_QUERIES.listPets, [after, limit])
      : await this.#db.query<PetRow>(POSTGRES_HOT_QUERIES.listPetsByStatus, [status, after, limit])
    return rows.map(petFromRow)
  }

  async countPets (): Promise<number> {
    const { rows } = await this.#db.query<{ n: string }>('SELECT count(*) AS n FROM pets')
    return Number(rows[0]!.n)
  }

  async insertPets (pets: NewPet[]): Promise<number> {
    if (pets.length === 0) return 0
    // Under the pet insert lock like every create, so ids still become visible in id order;
    // one statement per batch, rows in the order given.
    return this.#write(() => this.#db.insertTransaction(async (client) => {
      const result = await client.query('INSERT INTO pets (name, category_id, status) SELECT name, category_id, status FROM unnest($1::text[], $2::int8[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, n) ORDER BY n', [
        pets.map((pet) => pet.name),
        pets.map((pet) => pet.categoryId.toString()),
        pets.map((pet) => pet.status ?? null)
      ])
      return result.rowCount ?? 0
    }))
  }

  insertPetsWithIds (pets: Pet[]): Promise<PetsWithIdsImport> {
    return this.#write(() => this.#db.insertTransaction((client) => insertPetsWithIds(client, pets)))
  }

  async findApiKeyByHash (hash: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.#db.query<KeyRow>(POSTGRES_HOT_QUERIES.findApiKeyByHash, [hash])
    return rows[0] && keyFromRow(rows[0])
  }

  createApiKey (key: NewApiKey, audit: KeyAudit): Promise<ApiKeyRecord> {
    return this.#write(() => createApiKey(this.#db, key, audit))
  }

  listApiKeys (): Promise<ApiKeyRecord[]> {
    return listApiKeys(this.#db)
  }

  revokeApiKey (id: number, audit: KeyAudit): Promise<KeyRevocation> {
    return this.#write(() => revokeApiKey(this.#db, id, audit))
  }

  listKeyEvents (filter: KeyEventFilter): Promise<KeyEvent[]> {
    return listKeyEvents(this.#db, filter)
  }

  touchApiKey (id: number, at: string): Promise<void> {
    return this.#write(() => touchApiKey(this.#db, id, at))
  }

  countApiKeys (): Promise<number> {
    return countApiKeys(this.#db)
  }

  rotateApiKey (oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string, audit: KeyAudit): Promise<KeyRotation> {
    return this.#write(() => rotateApiKey(this.#db, oldId, newKey, oldExpiresAt, now, audit))
  }

  pools (): PoolFigures[] {
    return this.#db.pools()
  }

  close (): Promise<void> {
    return this.#db.close()
  }
}
