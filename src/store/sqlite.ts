import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import type { NewPet, Pet, PetStatus } from '../schemas.ts'
import { GroupCommit } from './group-commit.ts'
import { loadMigrations } from './migrations.ts'
import type { ApiKeyRecord, IdempotencyClaim, IdempotentCreate, ListPetsOptions, NewApiKey, Store } from './types.ts'

interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus | null }
/** The same columns read as an array: cheaper than an object per row on the list path. */
type PetTuple = [bigint, string, bigint, PetStatus | null]

function petFromTuple (row: PetTuple): Pet {
  const pet: Pet = { id: row[0], name: row[1], categoryId: row[2] }
  if (row[3] !== null) pet.status = row[3]
  return pet
}
interface KeyRow {
  id: number
  name: string
  prefix: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  expires_at: string | null
}

export function petFromRow (row: PetRow): Pet {
  const pet: Pet = { id: BigInt(row.id), name: row.name, categoryId: BigInt(row.category_id) }
  if (row.status !== null) pet.status = row.status
  return pet
}

export function keyFromRow (row: KeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at
  }
}

/** Where a sqlite: URL points; ':memory:' for an in-memory database. */
export function sqlitePath (url: string): string {
  const path = url.slice('sqlite:'.length)
  if (path === '') throw new Error('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/petstore.db')
  return path
}

/**
 * Opens the file, creating its directory. A failure (a path under a file, a directory, a file
 * that is not SQLite) names the setting, since that is what an operator fixes.
 */
function openDatabase (path: string): DatabaseSync {
  let db: DatabaseSync | undefined
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    db = new DatabaseSync(path)
    // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so an
    // acknowledged 201 survives a crash or a power cut. The busy timeout covers the CLI
    // writing while the server runs; it is short because node:sqlite waits synchronously,
    // holding the whole event loop: past it a write answers 503 and the caller retries.
    db.exec('PRAGMA busy_timeout = 250')
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = FULL')
    db.exec('PRAGMA foreign_keys = ON')
    return db
  } catch (error) {
    if (db?.isOpen) db.close()
    throw new Error(`DATABASE_URL sqlite:${path} cannot be opened: ${error instanceof Error ? error.message : String(error)}`)
  }
}

// Read once: /readyz asks on every probe.
const LATEST_MIGRATION = loadMigrations('sqlite').at(-1)?.version ?? 0
const KEY_COLUMNS = 'id, name, prefix, created_at, last_used_at, revoked_at, expires_at'

/** The queries on the request path. Each must be an index range scan: a test EXPLAINs them. */
export const SQLITE_HOT_QUERIES = {
  getPet: 'SELECT id, name, category_id, status FROM pets WHERE id = ?',
  listPets: 'SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?',
  listPetsByStatus: 'SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?',
  findApiKeyByHash: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`
} as const

export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly idsFollowCommitOrder = true
  readonly #db: DatabaseSync
  readonly #statements = new Map<string, StatementSync>()
  readonly #writes: GroupCommit
  readonly #dataVersion: StatementSync
  #ownKeyWrites = 0

  constructor (path: string) {
    this.#db = openDatabase(path)
    this.#writes = new GroupCommit(this.#db)
    this.#dataVersion = this.#db.prepare('PRAGMA data_version')
    this.#dataVersion.setReturnArrays(true)
  }

  /**
   * Changes whenever another connection (the CLI, another process) has committed, and when
   * this one changed a key: caches of keys stay exact without a time bound.
   */
  dataVersion (): number {
    return (this.#dataVersion.get() as unknown as [number])[0] * 1_000_000 + this.#ownKeyWrites
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

  #transaction<T> (work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE')
    try {
      const result = work()
      this.#db.exec('COMMIT')
      return result
    } catch (error) {
      this.#db.exec('ROLLBACK')
      throw error
    }
  }

  async migrate (): Promise<string[]> {
    this.#db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
    // BEGIN IMMEDIATE takes the write lock first, so two processes starting together
    // apply each migration exactly once.
    return this.#transaction(() => {
      const applied = new Set(this.#db.prepare('SELECT version FROM schema_migrations').all().map((row) => Number(row.version)))
      const names: string[] = []
      for (const migration of loadMigrations('sqlite')) {
        if (applied.has(migration.version)) continue
        this.#db.exec(migration.sql)
        this.#db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString())
        names.push(`${String(migration.version).padStart(3, '0')}-${migration.name}`)
      }
      return names
    })
  }

  async checkReady (): Promise<void> {
    const row = this.#statement('SELECT max(version) AS version FROM schema_migrations').get()
    if (Number(row?.version ?? 0) < LATEST_MIGRATION) throw new Error('database schema is behind: run migrations')
  }

  createPet (pet: NewPet): Promise<Pet> {
    const insert = this.#statement('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id')
    return this.#writes.run(() => {
      const { id } = insert.get(pet.name, pet.categoryId, pet.status ?? null) as { id: bigint }
      return { id, ...pet }
    })
  }

  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
    // One synchronous step of a group-commit transaction: no other write runs in between (a
    // second request with the same key, even in the same batch, finds this record), other
    // processes wait for the write lock, and the pet and its record commit or vanish together.
    return this.#writes.run((): IdempotentCreate => {
      const existing = this.#statement('SELECT fingerprint, pet_id, expires_at FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?')
        .get(claim.apiKeyId, claim.key) as { fingerprint: string, pet_id: bigint, expires_at: string } | undefined
      if (existing && existing.expires_at > claim.now) {
        if (existing.fingerprint !== claim.fingerprint) return { outcome: 'conflict' }
        const row = this.#statement('SELECT id, name, category_id, status FROM pets WHERE id = ?').get(existing.pet_id)
        return { outcome: 'replayed', pet: petFromRow(row as unknown as PetRow) }
      }
      const row = this.#statement('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id, name, category_id, status')
        .get(pet.name, pet.categoryId, pet.status ?? null) as unknown as PetRow
      // An expired record is replaced: the key starts a new life with this request.
      this.#statement(`INSERT INTO idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at)
        VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id,
          created_at = excluded.created_at, expires_at = excluded.expires_at`)
        .run(claim.apiKeyId, claim.key, claim.fingerprint, row.id, claim.now, claim.expiresAt)
      return { outcome: 'created', pet: petFromRow(row) }
    })
  }

  async deleteExpiredIdempotencyRecords (now: string): Promise<number> {
    return Number(this.#statement('DELETE FROM idempotency_records WHERE expires_at <= ?').run(now).changes)
  }

  async getPet (id: bigint): Promise<Pet | undefined> {
    const row = this.#statement(SQLITE_HOT_QUERIES.getPet).get(id)
    return row ? petFromRow(row as unknown as PetRow) : undefined
  }

  async listPets ({ limit, status, afterId }: ListPetsOptions): Promise<Pet[]> {
    const after = afterId ?? 0n
    const rows = status === undefined
      ? this.#tuples(SQLITE_HOT_QUERIES.listPets).all(after, limit)
      : this.#tuples(SQLITE_HOT_QUERIES.listPetsByStatus).all(status, after, limit)
    return (rows as unknown as PetTuple[]).map(petFromTuple)
  }

  #tuples (sql: string): StatementSync {
    const statement = this.#statement(sql)
    statement.setReturnArrays(true)
    return statement
  }

  async countPets (): Promise<number> {
    return Number(this.#statement('SELECT count(*) AS n FROM pets').get()?.n)
  }

  async createApiKey (key: NewApiKey): Promise<ApiKeyRecord> {
    const row = this.#statement(`INSERT INTO api_keys (name, prefix, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`)
      .get(key.name, key.prefix, key.hash, new Date().toISOString(), key.expiresAt ?? null)
    return keyFromRow(row as unknown as KeyRow)
  }

  async findApiKeyByHash (hash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.#statement(SQLITE_HOT_QUERIES.findApiKeyByHash).get(hash)
    return row ? keyFromRow(row as unknown as KeyRow) : undefined
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    return (this.#statement(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`).all() as unknown as KeyRow[]).map(keyFromRow)
  }

  async revokeApiKey (id: number): Promise<boolean> {
    this.#ownKeyWrites++
    const result = this.#statement('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?').run(new Date().toISOString(), id)
    return Number(result.changes) > 0
  }

  async touchApiKey (id: number, at: string): Promise<void> {
    this.#statement('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at, id)
  }

  async countApiKeys (): Promise<number> {
    return Number(this.#statement('SELECT count(*) AS n FROM api_keys').get()?.n)
  }

  async insertPets (pets: NewPet[]): Promise<number> {
    const insert = this.#statement('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)')
    // Synchronous from BEGIN to COMMIT, so no group commit can interleave on this connection.
    return this.#transaction(() => {
      for (const pet of pets) insert.run(pet.name, pet.categoryId, pet.status ?? null)
      return pets.length
    })
  }

  async rotateApiKey (oldId: number, newKey: NewApiKey, oldExpiresAt: string, now: string) {
    this.#ownKeyWrites++
    return this.#transaction(() => {
      const usable = this.#statement('SELECT id FROM api_keys WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)').get(oldId, now)
      if (!usable) return undefined
      const old = this.#statement(`UPDATE api_keys SET expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at < ? THEN expires_at ELSE ? END WHERE id = ? RETURNING ${KEY_COLUMNS}`)
        .get(oldExpiresAt, oldExpiresAt, oldId) as unknown as KeyRow
      const created = this.#statement(`INSERT INTO api_keys (name, prefix, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`)
        .get(newKey.name, newKey.prefix, newKey.hash, now, newKey.expiresAt ?? null) as unknown as KeyRow
      return { created: keyFromRow(created), old: keyFromRow(old) }
    })
  }

  async close (): Promise<void> {
    if (this.#db.isOpen) this.#db.close()
  }
}
