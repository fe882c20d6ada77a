import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { openStore } from '../../src/store/index.ts'
import { POSTGRES_HOT_QUERIES } from '../../src/store/postgres/postgres-store.ts'
import { bulkSeedPets } from '../helpers/bulk-seed.ts'
import { freshSchema, TEST_DATABASE_URL } from '../helpers/pg-schema.ts'

const EXAMPLE_PARAMS: Record<keyof typeof POSTGRES_HOT_QUERIES, unknown[]> = {
  getPet: [5],
  listPets: [500, 21],
  listPetsByStatus: ['sold', 500, 21],
  findApiKeyByHash: ['0'.repeat(64)]
}

interface PlanNode { 'Node Type': string, 'Index Name'?: string, Plans?: PlanNode[] }
const steps = (node: PlanNode): string[] =>
  [node['Index Name'] ? `${node['Node Type']} using ${node['Index Name']}` : node['Node Type'], ...(node.Plans ?? []).flatMap(steps)]

test('every query on the PostgreSQL request path is an index scan, never a sequential scan', async (t) => {
  const { schema, url } = freshSchema(t)
  const store = await openStore(url)
  await store.migrate()
  await store.close()
  const inSchema = `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`
  // Enough rows, analysed, that the planner picks what it would pick in production.
  await bulkSeedPets(inSchema, 5000)
  const client = new pg.Client({ connectionString: inSchema })
  await client.connect()
  t.after(() => client.end())
  await client.query(`INSERT INTO api_keys (name, prefix, hash, created_at)
    SELECT 'key-' || x, 'psk_' || x, encode(sha256(x::text::bytea), 'hex'), now() FROM generate_series(1, 2000) AS x`)
  await client.query('ANALYZE')

  const plans: Record<string, string[]> = {}
  for (const [name, sql] of Object.entries(POSTGRES_HOT_QUERIES)) {
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, EXAMPLE_PARAMS[name as keyof typeof POSTGRES_HOT_QUERIES])
    plans[name] = steps((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan)
  }
  t.diagnostic(JSON.stringify(plans, null, 2))
  assert.deepEqual(plans, {
    getPet: ['Index Scan using pets_pkey'],
    listPets: ['Limit', 'Index Scan using pets_pkey'],
    listPetsByStatus: ['Limit', 'Index Scan using pets_status_id'],
    findApiKeyByHash: ['Index Scan using api_keys_hash_key']
  })
})
