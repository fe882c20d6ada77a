import type pg from 'pg'
import type { Pet } from '../../contract/schemas.ts'
import { planPetsWithIds } from '../pets-with-ids-plan.ts'
import type { PetsWithIdsImport } from '../types.ts'
import { PET_COLUMNS, petFromRow, type PetRow } from './postgres-rows.ts'

/**
 * insertPetsWithIds, inside a transaction that holds the pet insert lock: creates on every
 * instance draw their ids under the same lock, so none can take an id between the check and
 * the insert, and the identity sequence is moved past the new ids before the lock is let go.
 */
export async function insertPetsWithIds (client: pg.PoolClient, pets: Pet[]): Promise<PetsWithIdsImport> {
  const ids = pets.map((pet) => pet.id.toString())
  const { rows } = await client.query<PetRow>(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ANY($1::int8[])`, [ids])
  const stored = new Map(rows.map((row) => [BigInt(row.id), petFromRow(row)]))
  // The sequence has handed out every id up to its last value, including ids of creates that
  // rolled back: those are never given to another pet either.
  const { rows: [highest] } = await client.query<{ id: string }>(
    "SELECT greatest(coalesce(max(id), 0), coalesce(pg_sequence_last_value(pg_get_serial_sequence('pets', 'id')::regclass), 0))::text AS id FROM pets")
  const plan = planPetsWithIds(pets, stored, BigInt(highest!.id))
  if ('outcome' in plan) return plan
  if (plan.insert.length > 0) {
    await client.query(`INSERT INTO pets (id, name, category_id, status) OVERRIDING SYSTEM VALUE
      SELECT id, name, category_id, status FROM unnest($1::int8[], $2::text[], $3::int8[], $4::text[]) AS t(id, name, category_id, status)`, [
      plan.insert.map((pet) => pet.id.toString()),
      plan.insert.map((pet) => pet.name),
      plan.insert.map((pet) => pet.categoryId.toString()),
      plan.insert.map((pet) => pet.status ?? null)
    ])
    await client.query("SELECT setval(pg_get_serial_sequence('pets', 'id'), $1::int8)", [plan.insert.at(-1)!.id.toString()])
  }
  return { outcome: 'written', inserted: plan.insert.length, skipped: plan.skipped }
}
