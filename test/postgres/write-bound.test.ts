import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { encodeCursor } from '../../src/contract/int64.ts'
import { PET_INSERT_LOCK } from '../../src/store/postgres/writes.ts'
import { buildTestApp, json, type TestApp } from '../helpers.ts'
import { TEST_DATABASE_URL } from '../pg-schema.ts'

const PETS = 500
const READS = 100
const WAITING_CREATES = 20

/** One read that no answer cache holds yet: getPet of an id, or the page after it. */
function read (app: TestApp, n: number) {
  const id = BigInt(n)
  return app.app.inject({ method: 'GET', url: n % 2 === 0 ? `/v1/pets/${id}` : `/v1/pets?limit=5&cursor=${encodeCursor(id)}`, headers: app.auth })
}

/** Sequential reads of ids from..from+count; stops at the first that is not 200. */
async function timedReads (app: TestApp, from: number, count: number): Promise<{ statuses: number[], p50: number }> {
  const statuses: number[] = []
  const durations: number[] = []
  for (let n = from; n < from + count; n++) {
    const started = performance.now()
    const res = await read(app, n)
    durations.push(performance.now() - started)
    statuses.push(res.statusCode)
    if (res.statusCode !== 200) break
  }
  durations.sort((a, b) => a - b)
  return { statuses, p50: durations[durations.length >> 1]! }
}

test('creates waiting for the pet insert lock leave connections to reads: uncached gets and lists answer 200 within twice their usual time', async (t) => {
  const app = await buildTestApp(t)
  const schema = new URL(app.url).searchParams.get('schema')!
  await app.store.insertPets(Array.from({ length: PETS }, (_, i) => ({ name: `p${i}`, categoryId: BigInt(i) })))
  // Warm up: the key is looked up and each statement prepared on a connection or two.
  await timedReads(app, 1, 10)
  const before = await timedReads(app, 11, READS)

  // Another instance holds the insert lock: every create of this one waits for it.
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await holder.connect()
  t.after(() => holder.end())
  await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [PET_INSERT_LOCK, schema])
  const creates = Array.from({ length: WAITING_CREATES * 2 }, (_, i) => app.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...app.auth, ...json, ...(i % 2 === 0 ? { 'idempotency-key': `waiting-${i}` } : {}) },
    payload: `{"name":"w${i}","categoryId":${i}}`
  }))
  await sleep(300)
  let during: Awaited<ReturnType<typeof timedReads>>
  try {
    during = await timedReads(app, 11 + READS, READS)
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [PET_INSERT_LOCK, schema])
  }

  assert.deepEqual(during.statuses, Array(READS).fill(200), 'every read answers 200 while creates wait')
  assert.ok(during.p50 <= 2 * before.p50, `reads took ${during.p50.toFixed(2)} ms at p50 while creates waited, ${before.p50.toFixed(2)} ms before`)
  const created = await Promise.all(creates)
  assert.deepEqual(created.map((res) => res.statusCode), Array(WAITING_CREATES * 2).fill(201), 'the waiting creates all succeed once the lock is free')
  assert.equal(await app.store.countPets(), PETS + WAITING_CREATES * 2)
})
