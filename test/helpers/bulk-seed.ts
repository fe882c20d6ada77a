import { DatabaseSync } from 'node:sqlite'
import pg from 'pg'
import type { NewPet, PetStatus } from '../../src/contract/schemas.ts'
import { parsePostgresUrl } from '../../src/store/postgres/pool.ts'

/**
 * Many pets straight into the database, not over HTTP (which would take minutes at a million
 * pets): the query-plan tests need enough rows for the planner, and the benchmark (bench/)
 * seeds its stores with it. Status mix: 60 % available, 30 % pending, 1 % sold (the rare
 * filter), 9 % none. Pet i is the same on every store and in the benchmark's baseline, which
 * builds its pets in memory with seededPet.
 */
export function seededPet (i: number): NewPet {
  const bucket = i % 100
  const status: PetStatus | undefined = bucket < 60 ? 'available' : bucket < 90 ? 'pending' : bucket === 90 ? 'sold' : undefined
  const pet: NewPet = { name: `pet-${i}`, categoryId: BigInt(i % 50) }
  if (status) pet.status = status
  return pet
}

const STATUS_SQL = "CASE WHEN x % 100 < 60 THEN 'available' WHEN x % 100 < 90 THEN 'pending' WHEN x % 100 = 90 THEN 'sold' END"

/** Pets 1..count, as seededPet describes them, into a migrated store at a sqlite: or postgres: URL. */
export async function bulkSeedPets (databaseUrl: string, count: number): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new DatabaseSync(databaseUrl.slice('sqlite:'.length))
    db.exec(`WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ${count})
      INSERT INTO pets (name, category_id, status) SELECT 'pet-' || x, x % 50, ${STATUS_SQL} FROM seq`)
    db.close()
    return
  }
  const target = parsePostgresUrl(databaseUrl)
  const client = new pg.Client({ connectionString: target.connectionString, options: target.schema ? `-c search_path=${target.schema}` : undefined })
  await client.connect()
  await client.query(`INSERT INTO pets (name, category_id, status) SELECT 'pet-' || x, x % 50, ${STATUS_SQL} FROM generate_series(1, ${count}) AS x`)
  await client.query('ANALYZE pets')
  await client.end()
}
