import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { NewPet, Pet, PetStatus } from '../../contract/schemas.ts'
import type { IdempotencyClaim, IdempotentCreate } from '../types.ts'

export interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus | null }

export function petFromRow (row: PetRow): Pet {
  const pet: Pet = { id: BigInt(row.id), name: row.name, categoryId: BigInt(row.category_id) }
  if (row.status !== null) pet.status = row.status
  return pet
}

/** A pet write as the store hands it to its pet writer (see sqlite-pet-writer.ts). */
export type PetWrite =
  | { op: 'createPet', pet: NewPet }
  | { op: 'createPetIdempotently', pet: NewPet, claim: IdempotencyClaim }

/**
 * The SQL of the two pet writes, each one synchronous step inside a group-commit transaction
 * (see GroupCommit): no other write runs in between.
 */
export class PetWrites {
  readonly #insert: StatementSync
  readonly #insertReturningRow: StatementSync
  readonly #findRecord: StatementSync
  readonly #getPet: StatementSync
  readonly #upsertRecord: StatementSync

  constructor (db: DatabaseSync) {
    const prepare = (sql: string) => {
      const statement = db.prepare(sql)
      statement.setReadBigInts(true)
      return statement
    }
    // run() gives the new rowid: a RETURNING clause would make SQLite build a result row for it.
    this.#insert = prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)')
    this.#insertReturningRow = prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id, name, category_id, status')
    this.#findRecord = prepare('SELECT fingerprint, pet_id, expires_at FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?')
    this.#getPet = prepare('SELECT id, name, category_id, status FROM pets WHERE id = ?')
    // An expired record is replaced: the key starts a new life with this request.
    this.#upsertRecord = prepare(`INSERT INTO idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id,
        created_at = excluded.created_at, expires_at = excluded.expires_at`)
  }

  apply (write: PetWrite): Pet | IdempotentCreate {
    return write.op === 'createPet' ? this.createPet(write.pet) : this.createPetIdempotently(write.pet, write.claim)
  }

  createPet (pet: NewPet): Pet {
    const { lastInsertRowid } = this.#insert.run(pet.name, pet.categoryId, pet.status ?? null)
    return { id: lastInsertRowid as bigint, ...pet }
  }

  /**
   * A second request with the same key, even in the same batch, finds this record; the pet and
   * its record commit or vanish together.
   */
  createPetIdempotently (pet: NewPet, claim: IdempotencyClaim): IdempotentCreate {
    const existing = this.#findRecord.get(claim.apiKeyId, claim.key) as { fingerprint: string, pet_id: bigint, expires_at: string } | undefined
    if (existing && existing.expires_at > claim.now) {
      if (existing.fingerprint !== claim.fingerprint) return { outcome: 'conflict' }
      return { outcome: 'replayed', pet: petFromRow(this.#getPet.get(existing.pet_id) as unknown as PetRow) }
    }
    const row = this.#insertReturningRow.get(pet.name, pet.categoryId, pet.status ?? null) as unknown as PetRow
    this.#upsertRecord.run(claim.apiKeyId, claim.key, claim.fingerprint, row.id, claim.now, claim.expiresAt)
    return { outcome: 'created', pet: petFromRow(row) }
  }
}
