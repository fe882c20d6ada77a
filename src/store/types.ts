import type { NewPet, Pet, PetStatus } from '../contract/schemas.ts'
import type { WriteStateListener } from './write-health.ts'

/**
 * written: the pets whose ids were new were stored with them; the others were already stored,
 * exactly so, and were left alone (skipped).
 * refused: nothing was written, because of pets[index]: its id holds another pet, or is new but
 * not above the largest id the store has assigned (ids are never reused, and a new pet's id is
 * above every earlier one, which the reply cache relies on).
 */
export type PetsWithIdsImport =
  | { outcome: 'written', inserted: number, skipped: number }
  | { outcome: 'refused', index: number, reason: string }

export interface ListPetsOptions {
  limit: number
  status?: PetStatus
  /** Keyset position: only pets with a greater id. */
  afterId?: bigint
}

/** What a key may do: read lists and gets animals; write also adds them. */
export type KeyScope = 'read' | 'write'
export const KEY_SCOPES: readonly KeyScope[] = ['read', 'write']

/** An API key as stored: never the secret, only its SHA-256 hash and a display prefix. */
export interface ApiKeyRecord {
  id: number
  name: string
  prefix: string
  scope: KeyScope
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
  expiresAt: string | null
  /** The id of the first key of its rotation chain (its own id when it was never rotated into). */
  lineageId: number
  /** The key it replaced, when keys rotate issued it. */
  rotatedFrom: number | null
}

/** A key to issue; without a scope it is a write key. */
export interface NewApiKey { name: string, prefix: string, hash: string, scope?: KeyScope, expiresAt?: string | null }

/**
 * rotated: the successor was issued (with the old key's scope) and the old key's expiry set;
 * events are the rows this wrote to the key trail.
 * not_usable: no key with that id is usable now (unknown, revoked or expired); nothing was written.
 * has_successor: the key was already rotated and that successor is still usable; nothing was written.
 */
export type KeyRotation =
  | { outcome: 'rotated', created: ApiKeyRecord, old: ApiKeyRecord, events: KeyEvent[] }
  | { outcome: 'not_usable' }
  | { outcome: 'has_successor', successor: ApiKeyRecord }

/**
 * revoked: the key was revoked now, and event is the row written to the key trail.
 * already_revoked: it was revoked before (key.revokedAt says when); nothing was written.
 * not_found: no key has that id; nothing was written.
 */
export type KeyRevocation =
  | { outcome: 'revoked', key: ApiKeyRecord, event: KeyEvent }
  | { outcome: 'already_revoked', key: ApiKeyRecord }
  | { outcome: 'not_found' }

/** Who changes a key, and on which host: recorded in the key trail with the change. */
export interface KeyAudit { actor: string, host: string }

/**
 * create, revoke, rotate (the key's expiry set by a rotation; relatedKeyId is its successor),
 * expires (the moment a key stops working, recorded when that moment is set and dated then).
 */
export type KeyChange = 'create' | 'revoke' | 'rotate' | 'expires'
export const KEY_CHANGES: readonly KeyChange[] = ['create', 'revoke', 'rotate', 'expires']

/** One row of the key trail. It names the key by id, prefix, name and scope: never the key or its hash. */
export interface KeyEvent {
  /** ISO 8601; an expires row is dated in the future until the key's expiry has passed. */
  at: string
  change: KeyChange
  keyId: number
  prefix: string
  name: string
  scope: KeyScope
  /** rotate: the successor issued; create by a rotation: the key it replaces; otherwise null. */
  relatedKeyId: number | null
  actor: string
  host: string
}

/** Which rows of the key trail to read: from a time on (ISO 8601), of one key. */
export interface KeyEventFilter { since?: string, keyId?: number }

/**
 * A create that carries an Idempotency-Key: the key is scoped to the lineage of the API key
 * that sent it, so a retry sent with a rotated successor finds the record of its predecessor.
 */
export interface IdempotencyClaim {
  keyLineageId: number
  key: string
  /** Hash of the validated body: the same key with another body is a conflict. */
  fingerprint: string
  /** ISO 8601; a record whose expiresAt is not after now no longer counts. */
  now: string
  expiresAt: string
}

/**
 * created: the pet is new and the record was written with it, in one transaction.
 * replayed: a live record with the same fingerprint exists; pet is the one it created.
 * conflict: a live record exists with another fingerprint; nothing was written.
 * in_progress: another request holding the same key did not finish in time; nothing was written.
 */
export type IdempotentCreate =
  | { outcome: 'created', pet: Pet }
  | { outcome: 'replayed', pet: Pet }
  | { outcome: 'conflict' }
  | { outcome: 'in_progress' }

/** A connection pool's size and use at one moment, for the pool gauges on /metrics. */
export interface PoolFigures {
  /** main: every statement but pet inserts; inserts: those that may wait behind the insert lock. */
  pool: 'main' | 'inserts'
  max: number
  /** Open connections, busy or idle. */
  total: number
  idle: number
  /** Store calls waiting for a connection: only while all max are busy. */
  waiting: number
}

/**
 * The databases a Store runs on. What differs by database outside an adapter is a table keyed
 * by it (Record<Dialect, …>), so that adding one makes the compiler name each place to change.
 */
export type Dialect = 'sqlite' | 'postgres'

/**
 * The writes of pets the API makes. Apart from the Store, SQLite's pet writer (group commit,
 * sqlite/pet-writer.ts) implements them, so that a new one is led there by the compiler too.
 */
export interface PetWrites {
  createPet(pet: NewPet): Promise<Pet>
  /** createPet at most once per (key lineage, Idempotency-Key) while the record lives. */
  createPetIdempotently(pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate>
}

/** The one storage seam: SQL lives only behind it, one adapter per database. */
export interface Store extends PetWrites {
  readonly kind: Dialect
  /**
   * True when a new pet always gets a larger id than every pet already visible (one writer
   * at a time). Concurrent writers with a sequence do not promise it: an id taken early can
   * commit late.
   */
  readonly idsFollowCommitOrder: boolean
  /** Applies pending migrations; safe to call from several processes at once. */
  migrate(): Promise<string[]>
  /**
   * Runs fn, which makes the first key when there is none, holding a lock that every instance
   * on this database takes for it, so that instances starting together on an empty database
   * make one key between them. SQLite takes none: fn runs at once.
   */
  underFirstKeyLock<T>(fn: () => Promise<T>): Promise<T>
  /**
   * Throws when the database cannot respond, its schema is behind the code, or writes fail for a
   * storage failure (then it tries one small write, so that an instance no longer sent
   * creates still sees the storage heal).
   */
  checkReady(): Promise<void>
  /**
   * Calls listener with the error when writes start failing for a storage failure
   * (disk full, read-only, I/O error: StorageFailureError, replied 503), and with undefined
   * when a write succeeds again: once per change, not per failed write.
   */
  watchWrites(listener: WriteStateListener): void
  /**
   * Removes at most limit records that expired at or before now (ISO 8601), in one short
   * transaction; returns how many. The purge calls it until fewer than limit are left.
   */
  deleteExpiredIdempotencyRecords(now: string, limit: number): Promise<number>
  /**
   * A store that reads in this thread (SQLite) returns at once, with the pet rather than a
   * promise of it: a get that misses the reply cache then costs no promise either.
   */
  getPet(id: bigint): Pet | undefined | Promise<Pet | undefined>
  listPets(options: ListPetsOptions): Promise<Pet[]>
  countPets(): Promise<number>
  /**
   * Issues a key and records it in the key trail (create, and expires when it has an expiry) in
   * the same transaction; the rows are keyCreatedEvents(record, audit).
   */
  createApiKey(key: NewApiKey, audit: KeyAudit): Promise<ApiKeyRecord>
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>
  listApiKeys(): Promise<ApiKeyRecord[]>
  /**
   * Revokes the key and records it in the key trail in one transaction; a scheduled expires row
   * of the key later than now is removed, as that expiry will not happen. Revoking twice keeps
   * the first time and writes nothing.
   */
  revokeApiKey(id: number, audit: KeyAudit): Promise<KeyRevocation>
  /** The key trail, oldest first (by time, then by the order written). */
  listKeyEvents(filter: KeyEventFilter): Promise<KeyEvent[]>
  touchApiKey(id: number, at: string): Promise<void>
  countApiKeys(): Promise<number>
  /** Adds the pets in one transaction: all of them, or on an error none. Returns how many were added. */
  insertPets(pets: NewPet[]): Promise<number>
  /**
   * Adds the pets with the ids they carry (`pets import --skip-existing`), in one transaction,
   * leaving out those already stored as they are: see PetsWithIdsImport.
   */
  insertPetsWithIds(pets: Pet[]): Promise<PetsWithIdsImport>
  /**
   * Issues newKey with the old key's scope and lineage, linked to it (rotatedFrom), and sets the old key's expiry to oldExpiresAt (an
   * earlier expiry it already has is kept), in one transaction. Refused when the old key is not
   * usable at `now`, or already has a successor usable at `now`: one key, one live successor.
   * The same transaction records rotate (old key) and create (successor) at `now`, and, when the
   * old key's expiry moved, expires at the new expiry in place of the scheduled one.
   */
  rotateApiKey(oldId: number, newKey: Omit<NewApiKey, 'scope'>, oldExpiresAt: string, now: string, audit: KeyAudit): Promise<KeyRotation>
  /**
   * A number that changes whenever keys may have changed (another connection or process
   * changed one, or this one wrote one), checked cheaply per request. Stores that cannot tell leave it out,
   * and key caches fall back to a time bound.
   */
  keyVersion?(): number
  /** Each connection pool's figures now (PostgreSQL); SQLite has no pool and leaves it out. */
  pools?(): PoolFigures[]
  close(): Promise<void>
}
