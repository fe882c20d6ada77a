import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { buildApp } from '../../src/app.ts'
import { openStore } from '../../src/store/index.ts'
import type { Store } from '../../src/store/types.ts'
import { testConfig } from '../helpers/app.ts'
import { dropSchema, randomSchemaName, schemaUrl, TEST_DATABASE_URL } from '../helpers/pg-schema.ts'
import { scrape } from '../helpers/scrape.ts'

/** The pool gauges' sample lines of an exposition, in its order. */
function poolLines (exposition: string): string[] {
  return exposition.split('\n').filter((line) => line.startsWith('petstore_db_pool_'))
}

/** Polls until the inserts pool's one connection is taken: its insert waits on the table lock. */
async function insertsPoolBusy (store: Store): Promise<void> {
  while (store.pools?.().find((figures) => figures.pool === 'inserts')?.idle !== 0) await sleep(10)
}

test('/metrics of a PostgreSQL app reports each pool\'s size, open, idle connections and the calls waiting for one', async (t) => {
  // The readiness timer would take the main pool's connection at a moment of its choosing;
  // held still, the main pool keeps the one connection the first readiness check opened.
  t.mock.timers.enable({ apis: ['setInterval'] })
  const schema = randomSchemaName()
  // DATABASE_POOL_MAX=2: one connection for pet inserts, one for everything else (poolSizes).
  const store = await openStore(schemaUrl(schema), { poolMax: 2 })
  await store.migrate()
  const app = await buildApp({ config: testConfig(), store })
  const locker = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await locker.connect()
  t.after(async () => {
    await locker.end()
    await app.close()
    await dropSchema(schema)
  })

  assert.deepEqual(poolLines(await scrape(app)), [
    'petstore_db_pool_max_connections{pool="main"} 1',
    'petstore_db_pool_max_connections{pool="inserts"} 1',
    'petstore_db_pool_connections{pool="main"} 1',
    'petstore_db_pool_connections{pool="inserts"} 0',
    'petstore_db_pool_idle_connections{pool="main"} 1',
    'petstore_db_pool_idle_connections{pool="inserts"} 0',
    'petstore_db_pool_waiting_calls{pool="main"} 0',
    'petstore_db_pool_waiting_calls{pool="inserts"} 0'
  ])

  // Pet inserts wait on the table lock: the first holds the inserts pool's connection, the
  // second waits for it.
  await locker.query('BEGIN')
  await locker.query(`LOCK TABLE ${schema}.pets IN EXCLUSIVE MODE`)
  const first = store.insertPets([{ name: 'Rex', categoryId: 7n }])
  await insertsPoolBusy(store)
  const second = store.insertPets([{ name: 'Tom', categoryId: 7n }])
  assert.deepEqual(poolLines(await scrape(app)), [
    'petstore_db_pool_max_connections{pool="main"} 1',
    'petstore_db_pool_max_connections{pool="inserts"} 1',
    'petstore_db_pool_connections{pool="main"} 1',
    'petstore_db_pool_connections{pool="inserts"} 1',
    'petstore_db_pool_idle_connections{pool="main"} 1',
    'petstore_db_pool_idle_connections{pool="inserts"} 0',
    'petstore_db_pool_waiting_calls{pool="main"} 0',
    'petstore_db_pool_waiting_calls{pool="inserts"} 1'
  ])

  await locker.query('COMMIT')
  assert.deepEqual(await Promise.all([first, second]), [1, 1])
  assert.deepEqual(poolLines(await scrape(app)), [
    'petstore_db_pool_max_connections{pool="main"} 1',
    'petstore_db_pool_max_connections{pool="inserts"} 1',
    'petstore_db_pool_connections{pool="main"} 1',
    'petstore_db_pool_connections{pool="inserts"} 1',
    'petstore_db_pool_idle_connections{pool="main"} 1',
    'petstore_db_pool_idle_connections{pool="inserts"} 1',
    'petstore_db_pool_waiting_calls{pool="main"} 0',
    'petstore_db_pool_waiting_calls{pool="inserts"} 0'
  ])
})
