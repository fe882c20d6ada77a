import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { SQLITE_HOT_QUERIES } from '../../src/store/sqlite/sqlite-store.ts'
import { openStore } from '../../src/store/index.ts'
import { bulkSeedPets } from '../helpers/bulk-seed.ts'

const EXAMPLE_PARAMS: Record<keyof typeof SQLITE_HOT_QUERIES, unknown[]> = {
  getPet: [5],
  listPets: [500, 21],
  listPetsByStatus: ['sold', 500, 21],
  findApiKeyByHash: ['0'.repeat(64)]
}

test('every query on the SQLite request path is an index search, never a full scan', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-plan-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const url = `sqlite:${join(dir, 'p.db')}`
  const store = await openStore(url)
  await store.migrate()
  await store.close()
  // Enough rows, analysed, that the planner picks what it would pick in production.
  await bulkSeedPets(url, 5000)
  const db = new DatabaseSync(join(dir, 'p.db'))
  db.exec('ANALYZE')
  const plans: Record<string, string[]> = {}
  for (const [name, sql] of Object.entries(SQLITE_HOT_QUERIES)) {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(EXAMPLE_PARAMS[name as keyof typeof SQLITE_HOT_QUERIES] as never[])) as Array<{ detail: string }>
    plans[name] = rows.map((row) => row.detail)
  }
  db.close()
  t.diagnostic(JSON.stringify(plans, null, 2))
  assert.deepEqual(plans, {
    getPet: ['SEARCH pets USING INTEGER PRIMARY KEY (rowid=?)'],
    listPets: ['SEARCH pets USING INTEGER PRIMARY KEY (rowid>?)'],
    listPetsByStatus: ['SEARCH pets USING INDEX pets_status_id (status=? AND id>?)'],
    findApiKeyByHash: ['SEARCH api_keys USING INDEX sqlite_autoindex_api_keys_1 (hash=?)']
  })
})
