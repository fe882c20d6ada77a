import type { NewPet, Pet } from '../../contract/schemas.ts'

/**
 * Pet inserts on PostgreSQL, in commit order and in batches.
 *
 * A sequence hands out ids before commit, so with concurrent writers id 100 can commit after
 * id 101 has been listed: a client paging with a cursor past 101 would never see 100. Every
 * transaction that inserts pets therefore first takes one advisory lock (per schema) and
 * holds it to its commit: ids become visible in id order, on every instance, and a full page
 * of a listing is final (which lets instances keep it, see idsFollowCommitOrder).
 *
 * One lock would make creates wait in line, one commit each; so creates that arrive while a
 * batch is being written are written together, in one statement and one commit. Each caller
 * gets its result only after the commit that holds its pet.
 */

export const PET_INSERT_LOCK = 0x7065_7470

// One statement, one round trip, its own transaction (autocommit): it takes the insert lock,
// inserts, and commits. The lock comes first by construction: the rows reach INSERT through a
// sort over input × lock, and a sort emits nothing before it has read all its input, so no id
// is drawn before the lock is held. Rows are numbered in the order given and the identity is
// drawn in that order, so ids sorted ascending line up with the input.
const INSERT_MANY = `WITH lock AS MATERIALIZED (
  SELECT pg_advisory_xact_lock($4::int4, hashtext($5::text)) AS held
), input AS (
  SELECT * FROM unnest($1::text[], $2::int8[], $3::text[]) WITH ORDINALITY AS t(name, category_id, status, n)
), inserted AS (
  INSERT INTO pets (name, category_id, status) SELECT name, category_id, status FROM input, lock ORDER BY n RETURNING id
)
SELECT id FROM inserted ORDER BY id`

// Enough to absorb a burst; a larger batch only holds the lock longer.
const MAX_BATCH = 256

/** Runs one statement that returns ids (int8 as text) on a pooled connection (see PostgresStore). */
export type RunStatement = (text: string, values: unknown[]) => Promise<Array<{ id: string }>>

interface Pending { pet: NewPet, resolve: (pet: Pet) => void, reject: (error: unknown) => void }

export class PetInsertBatcher {
  readonly #run: RunStatement
  readonly #schema: string
  #queue: Pending[] = []
  #writing = false

  constructor (run: RunStatement, schema: string) {
    this.#run = run
    this.#schema = schema
  }

  insert (pet: NewPet): Promise<Pet> {
    return new Promise<Pet>((resolve, reject) => {
      this.#queue.push({ pet, resolve, reject })
      if (!this.#writing) this.#writeAll().catch(() => {}) // #writeAll settles every caller itself
    })
  }

  async #writeAll (): Promise<void> {
    this.#writing = true
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH)
      try {
        const ids = await this.#insertMany(batch.map((p) => p.pet))
        batch.forEach((pending, i) => pending.resolve({ id: ids[i]!, ...pending.pet }))
      } catch (error) {
        for (const pending of batch) pending.reject(error)
      }
    }
    this.#writing = false
  }

  /** Inserts pets in one self-locking statement; ids in input order. */
  async #insertMany (pets: NewPet[]): Promise<bigint[]> {
    const rows = await this.#run(INSERT_MANY, [
      pets.map((p) => p.name), pets.map((p) => p.categoryId.toString()), pets.map((p) => p.status ?? null), PET_INSERT_LOCK, this.#schema
    ])
    return rows.map((row) => BigInt(row.id))
  }
}
