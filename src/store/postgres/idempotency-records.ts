import type { NewPet } from '../../contract/schemas.ts'
import type { IdempotencyClaim, IdempotentCreate } from '../types.ts'
import type { Connections } from './pooled-connections.ts'
import { isLockTimeout } from './pool.ts'
import { PET_COLUMNS, petFromRow, type PetRow } from './postgres-rows.ts'

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
// How long a request waits for another one holding the same key before it gets 409.
const SAME_KEY_WAIT_MS = 2000

/** A live record holds the key: thrown to roll back the transaction's pet, so nothing is written. */
class KeyTaken extends Error {
  readonly result: IdempotentCreate
  constructor (result: IdempotentCreate) {
    super('idempotency key already taken')
    this.result = result
  }
}

/** Creates the pet unless a live record holds the key: then replays it, or reports conflict or in progress. */
export async function createPetIdempotently (db: Connections, pet: NewPet, claim: IdempotencyClaim): Promise<IdempotentCreate> {
  try {
    // Under the pet insert lock like every create, so ids still become visible in id order.
    return await db.insertTransaction(async (client): Promise<IdempotentCreate> => {
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

/** Deletes up to limit records expired at now, the oldest first; returns how many. */
export async function deleteExpiredIdempotencyRecords (db: Connections, now: string, limit: number): Promise<number> {
  return (await db.query(DELETE_EXPIRED_RECORDS, [now, limit], db.insertPool)).rowCount ?? 0
}
