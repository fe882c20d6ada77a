import type pg from 'pg'
import type { NewPet, Pet } from '../../contract/schemas.ts'
import { loadMigrations } from '../migrations.ts'
import { StorageConditionError } from '../errors.ts'
import { WriteHealth, type WriteStateListener } from '../write-health.ts'
import { createMigrationClient, createPool, failureOf, isLockTimeout, isOutage, parsePostgresUrl, poolSizes, unavailable, type PostgresOptions, type PostgresTarget } from './pool.ts'
import { KEY_COLUMNS, keyFromRow, PET_COLUMNS, petFromRow, type KeyRow, type PetRow } from './rows.ts'
import { PET_INSERT_LOCK, PetInsertBatcher } from './writes.ts'
import type { ApiKeyRecord, IdempotencyClaim, IdempotentCreate, KeyRotation, ListPetsOptions, NewApiKey, Store } from '../types.ts'

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

/**
 * The pet and its idempotency record in one statement; api_key_id holds the key's lineage (see
 * migration key-lineage). The record is claimed by the primary key: a concurrent request with
 * the same key waits there until the first commits (then sees its record) or rolls back (then
 * claims it). An expired record is taken over.
 */
const CREATE_WITH_CLAIM = `WITH pet AS (
  INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${PET_COLUMNS}
), claim AS (
  INSERT INTO idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at)
  SELECT $4, $5, $6, id, $7, $8 FROM pet
  ON CONFLICT (api_key_id, idempotency_key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, pet_id = EXCLUDED.pet_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE idempotency_records.expires_at <= EXCLUDED.created_at
  RETURNING pet_id
)
SELECT ${PET_COLUMNS}, (SELECT count(*) FROM claim) AS claimed FROM pet`
const LIVE_RECORD = `SELECT r.fingerprint, p.id, p.name, p.category_id, p.status
  FROM idempotency_records r JOIN pets p ON p.id = r.pet_id
  WHERE r.api_key_id = $1 AND r.idempotency_key = $2`
// The oldest expired records first, found through the expires_at index.
const DELETE_EXPIRED_RECORDS = `DELETE FROM idempotency_records WHERE (api_key_id, idempotency_key) IN (
  SELECT api_key_id, idempotency_key FROM idempotency_records WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`
// A write that changes nothing but is still written: whether writes work again.
const PROBE_WRITE = 'UPDATE schema_migrations SET applied_at = applied_at WHERE version = (SELECT max(version) FROM schema_migrations)'
/** A key that works at the time in $2: not revoked, not expired. */
const USABLE = '(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))'
// How long a request waits for another one holding the same key before it answers 409.
const SAME_KEY_WAIT_MS = 2000

/** A live record holds the key: thrown to roll back the transaction's pet, so nothing is written. */
class KeyTaken extends Error {
  readonly result: IdempotentCreate
  constructor (result: IdempotentCreate) {
    super('idempotency key already taken')
    this.result = result
  }
}

// Two-key advisory lock: this constant names "petstore migrations", the second key the schema,
// so instances on different schemas of one database do not wait for each other.
const MIGRATION_LOCK = 0x7065_7473

export class PostgresStore implements Store {
  readonly kind = 'postgres'
  // Pet inserts hold one advisory lock to their commit (see writes.ts).
  readonly idsFollowCommitOrder = true
  readonly #target: PostgresTarget
  readonly #options: PostgresOptions
  readonly #pool: pg.Pool
  // The connections statements that may wait for the pet insert lock are limited to (see poolSizes).
  readonly #insertPool: pg.Pool
  // Each statement is prepared once per connection, under a name of its own.
  readonly #statementNames = new Map<string, string>()
  readonly #inserts: PetInsertBatcher
  readonly #writes = new WriteHealth()

  constructor (url: string, options: PostgresOptions = {}) {
    this.#target = parsePostgresUrl(url)
    this.#options = options
    const sizes = poolSizes(options)
    this.#pool = createPool(this.#target, options, sizes?.others ?? 1)
    this.#insertPool = sizes ? createPool(this.#target, options, sizes.inserts) : this.#pool
    this.#inserts = new PetInsertBatcher(async (text, values) => (await this.#query<{ id: string }>(text, values, this.#insertPool)).rows, this.#target.schema ?? '')
  }

  /** A transaction holding the pet insert lock of this schema until it commits. */
  #insertTransaction<T> (work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.#transaction(this.#insertPool, async (client) => {
      await client.query({ name: 'petstore_insert_lock', text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))', values: [PET_INSERT_LOCK, this.#target.schema ?? ''] })
      return await work(client)
    })
  }

  async #connect (pool: pg.Pool): Promise<pg.PoolClient> {
    try {
      return await pool.connect()
    } catch (error) {
      throw unavailable(this.#target, this.#options, error)
    }
  }

  /**
   * One statement on a pooled connection; an outage becomes StoreUnavailableError and the
   * connection is dropped. Row is the shape of the rows the statement returns.
   */
  async #query<Row extends pg.QueryResultRow = Record<string, never>> (text: string, values: unknown[] = [], pool = this.#pool): Promise<pg.QueryResult<Row>> {
    let name = this.#statementNames.get(text)
    if (!name) this.#statementNames.set(text, (name = `petstore_${this.#statementNames.size}`))
    const client = await this.#connect(pool)
    try {
      const result = await client.query<Row>({ name, text, values })
      client.release()
      return result
    } catch (error) {
      client.release(isOutage(error))
      throw failureOf(this.#target, this.#options, error)
    }
  }

  /** Runs a write: a full disk, a read-only database or an I/O error mark writes failing (see WriteHealth). */
  #write<T> (write: () => Promise<T>): Promise<T> {
    return this.#writes.track(write, (error) => error instanceof StorageConditionError ? error : undefined)
  }

  watchWrites (listener: WriteStateListener): void {
    this.#writes.watch(listener)
  }

  async migrate (): Promise<string[]> {
    const client = createMigrationClient(this.#target, this.#options)
    try {
      await client.connect()
    } catch (error) {
      throw unavailable(this.#target, this.#options, error)
    }
    const run = <Row extends pg.QueryResultRow = Record<string, never>>(text: string, values: unknown[] = []) => client.query<Row>(text, values)
    try {
      await run('BEGIN')
      // Held until COMMIT: instances starting together apply each migration exactly once.
      await run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, this.#target.schema ?? ''])
      if (this.#target.schema) await run(`CREATE SCHEMA IF NOT EXISTS ${this.#target.schema}`)
      await run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)')
      const applied = new Set((await run<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version))
      const names: string[] = []
      for (const migration of loadMigrations('postgres')) {
        if (applied.has(migration.version)) continue
        await run(migration.sql)
        await run('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [migration.version, migration.name])
        names.push(`${String(migration.version).padStart(3, '0')}-${migration.name}`)
      }
      await run('COMMIT')
      await client.end()
      return names
    } catch (error) {
      // Closing the connection rolls the transaction back and frees the lock. Not awaited:
      // on a link that went silent the goodbye would never be answered.
      client.end().catch(() => {})
      throw isOutage(error) ? unavailable(this.#target, this.#options, error) : error
    }
  }

  async checkReady (): Promise<void> {
    const { rows } = await this.#query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')
    if (Number(rows[0]?.version ?? 0) < LATEST_MIGRATION) throw new Error('database schema is behind: run migrations')
    if (this.#writes.failure) await this.#write(() => this.#query(PROBE_WRITE))
  }

  createPet (pet: NewPet): Promise<Pet> {
    return this.#write(() => this.#inserts.insert(pet))
  }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    return this.#write(() => this.#createPetIdempotently(pet, claim))
  }

  async #createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    try {
      // Under the pet insert lock like every create, so ids still become visible in id order.
      return await this.#insertTransaction(async (client): Promise<IdempotentCreate> => {
        await client.query(`SET LOCAL lock_timeout = ${SAME_KEY_WAIT_MS}`)
        const { rows: [created] } = await client.query<PetRow & { claimed: string }>(CREATE_WITH_CLAIM,
          [pet.name, pet.categoryId, pet.status ?? null, claim.keyLineageId, claim.key, claim.fingerprint, claim.now, claim.expiresAt])
        if (created!.claimed === '1') return { outcome: 'created', pet: petFromRow(created!) }
        const { rows: [live] } = await client.query<PetRow & { fingerprint: string }>(LIVE_RECORD, [claim.keyLineageId, claim.key])
        throw new KeyTaken(live!.fingerprint === claim.fingerprint ? { outcome: 'replayed', pet: petFromRow(live!) } : { outcome: 'conflict' })
      })
    } catch (error) {
      if (error instanceof KeyTaken) return error.result
      if (isLockTimeout(error)) return { outcome: 'in_progress' }
      throw error
    }
  }

  deleteExpiredIdempotencyRecords (now: string, limit: number): Promise<number> {
    return this.#write(async () => (await this.#query(DELETE_EXPIRED_RECORDS, [now, limit], this.#insertPool)).rowCount ?? 0)
  }

  async getPet (id: bigint): Promise<Pet | undefined> {
    const { rows } = await this.#query<PetRow>(POSTGRES_HOT_QUERIES.getPet, [id])
    return rows[0] && petFromRow(rows[0])
  }

  async listPets ({ limit, status, afterId }: ListPetsOptions): Promise<Pet[]> {
    const after = afterId ?? -(2n ** 63n)
    const { rows } = status === undefined
      ? await this.#query<PetRow>(POSTGRES_HOT_QUERIES.listPets, [after, limit])
      : await this.#query<PetRow>(POSTGRES_HOT_QUERIES.listPetsByStatus, [status, after, limit])
    return rows.map(petFromRow)
  }

  async countPets (): Promise<number> {
    const { rows } = await this.#query<{ n: string }>('SELECT count(*) AS n FROM pets')
    return Number(rows[0]!.n)
  }

  createApiKey (key: NewApiKey): Promise<ApiKeyRecord> {
    return this.#write(async () => {
      const { rows } = await this.#query<KeyRow>(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${KEY_COLUMNS}`,
        [key.name, key.prefix, key.hash, key.scope ?? 'write', new Date().toISOString(), key.expiresAt ?? null])
      return keyFromRow(rows[0]!)
    })
  }

  async findApiKeyByHash (hash: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.#query<KeyRow>(POSTGRES_HOT_QUERIES.findApiKeyByHash, [hash])
    return rows[0] && keyFromRow(rows[0])
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    const { rows } = await this.#query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`)
    return rows.map(keyFromRow)
  }

  revokeApiKey (id: number): Promise<boolean> {
    return this.#write(async () => {
      const result = await this.#query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2', [new Date().toISOString(), id])
      return (result.rowCount ?? 0) > 0
    })
  }

  touchApiKey (id: number, at: string): Promise<void> {
    return this.#write(async () => { await this.#query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]) })
  }

  async countApiKeys (): Promise<number> {
    const { rows } = await this.#query<{ n: string }>('SELECT count(*) AS n FROM api_keys')
    return Number(rows[0]!.n)
  }

  /** Runs work inside BEGIN … COMMIT on one connection of pool; an error rolls it back. */
  async #transaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect(pool)
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      client.release()
      return result
    } catch (error) {
      const outage = isOutage(error)
      if (!outage) await client.query('ROLLBACK').catch(() => {})
      client.release(outage)
      throw failureOf(this.#target, this.#options, error)
    }
  }

  async insertPets (pets: NewPet[]): Promise<number> {
    if (pets.length === 0) return 0
    // Under the pet insert lock like every create, so ids still become visible in id order;
    // one statement per batch, rows in the order given.
    return this.#write(() => this.#insertTransaction(async (client) => {
      const result = await client.query('INSERT INTO pets (name, category_id, status) SELECT name, category_id, status FROM unnest($1::text[], $2::int8[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, n) ORDER BY n', [
        pets.map((pet) => pet.name),
        pets.map((pet) => pet.categoryId.toString()),
        pets.map((pet) => pet.status ?? null)
      ])
      return result.rowCount ?? 0
    }))
  }

  rotateApiKey (oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string): Promise<KeyRotation> {
    return this.#write(() => this.#transaction(this.#pool, async (client): Promise<KeyRotation> => {
      // FOR UPDATE: a concurrent rotation of the same key waits here, and then sees this one's successor.
      const { rows: [usable] } = await client.query(`SELECT id FROM api_keys WHERE id = $1 AND ${USABLE} FOR UPDATE`, [oldId, now])
      if (!usable) return { outcome: 'not_usable' }
      const { rows: [successor] } = await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE rotated_from = $1 AND ${USABLE} ORDER BY id LIMIT 1`, [oldId, now])
      if (successor) return { outcome: 'has_successor', successor: keyFromRow(successor) }
      const { rows: [old] } = await client.query<KeyRow>(`UPDATE api_keys SET expires_at = LEAST(coalesce(expires_at, $1), $1) WHERE id = $2 RETURNING ${KEY_COLUMNS}`,
        [oldExpiresAt, oldId])
      if (!old) throw new Error('UPDATE … RETURNING returned no row')
      // The successor can do what its predecessor could, and shares its idempotency records.
      const { rows: [created] } = await client.query<KeyRow>(`INSERT INTO api_keys (name, prefix, hash, scope, created_at, expires_at, rotated_from, lineage_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
        [newKey.name, newKey.prefix, newKey.hash, old.scope, now, newKey.expiresAt ?? null, oldId, old.lineage_id])
      if (!created) throw new Error('INSERT … RETURNING returned no row')
      return { outcome: 'rotated', created: keyFromRow(created), old: keyFromRow(old) }
    }))
  }

  async close (): Promise<void> {
    await Promise.all([...new Set([this.#pool, this.#insertPool])].map((pool) => pool.ended ? undefined : pool.end()))
  }
}
