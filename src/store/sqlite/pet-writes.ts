import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { NewPet, Pet } from '../../contract/schemas.ts'
import type { IdempotencyClaim, IdempotentCreate } from '../types.ts'
import { int64, PET_COLUMNS, petFromRow, text } from './sqlite-rows.ts'

/**
 * The SQL of the two pet writes. Each method is one synchronous step that PetWriter runs
 * inside a group-commit transaction (see GroupCommit): no other write runs in between.
 */
export class PetWrites {
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
