import assert from 'node:assert/strict'
import { totalmem } from 'node:os'
import { test } from 'node:test'
import { memoryLimit } from '../../src/ops/capacity-metrics.ts'
import { buildTestApp, STORE_KIND } from '../helpers/app.ts'
import { scrape } from '../helpers/scrape.ts'

const GIB = 2 ** 30

test('the memory limit is the container\'s when it has one, else the machine\'s memory', () => {
  assert.equal(memoryLimit(512 * 2 ** 20, 16 * GIB), 512 * 2 ** 20)
  // No limit: 0 from older kernels' interfaces, 2^64 from an unlimited cgroup.
  assert.equal(memoryLimit(0, 16 * GIB), 16 * GIB)
  assert.equal(memoryLimit(2 ** 64, 16 * GIB), 16 * GIB)
  // A limit above the machine's memory never binds.
  assert.equal(memoryLimit(32 * GIB, 16 * GIB), 16 * GIB)
})

test('/metrics of a SQLite app reports the memory limit, and no pool: SQLite has none', { skip: STORE_KIND !== 'sqlite' }, async (t) => {
  const { app } = await buildTestApp(t)
  const exposition = await scrape(app)
  const limit = exposition.split('\n').filter((line) => line.startsWith('petstore_memory_limit_bytes'))
  assert.deepEqual(limit, [`petstore_memory_limit_bytes ${memoryLimit()}`])
  assert.ok(memoryLimit() > 0 && memoryLimit() <= totalmem())
  assert.doesNotMatch(exposition, /petstore_db_pool/)
})
