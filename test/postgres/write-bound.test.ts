import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { encodeCursor } from '../../src/contract/int64.ts'
import { PET_INSERT_LOCK } from '../../src/store/postgres/writes.ts'
import { buildTestApp, json, type TestApp } from '../helpers/app.ts'
import { TEST_DATABASE_URL } from '../helpers/pg-schema.ts'

const PETS = 1000
// Rounds of reads with the lock free, then held: alternating, so that a burst of load on the
// machine falls on both kinds alike.
const ROUNDS = 4
const READS_PER_ROUND = 25
const WAITING_CREATES = 20

/** A read that no reply cache holds yet: getPet of an id, or the page after it. */
function read (app: TestApp, n: number) {
  const id = BigInt(n)
  return app.app.inject({ method: 'GET', url: n % 2 === 0 ? `/v1/pets/${id}` : `/v1/pets?limit=5&cursor=${encodeCursor(id)}`, headers: app.auth })
}

/** Sequential reads of ids from..from+count, each a first: their statuses and durations. Stops at the first that is not 200. */
async function timedReads (app: TestApp, from: number, count: number): Promise<{ statuses: number[], durations: number[] }> {
  const statuses: number[] = []
  const durations: number[] = []
  for (let n = from; n < from + count; n++) {
    const started = performance.now()
    const res = await read(app, n)
    durations.push(performance.now() - started)
    statuses.push(res.statusCode)
    if (res.statusCode !== 200) break
  }
  return { statuses, durations }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

test('creates waiting for the pet insert lock leave connections to reads: uncached gets and lists get 200 within twice their usual time', async (t) => {
  const app = await buildTestApp(t)
  const schema = new URL(app.url).searchParams.get('schema')!
  await app.store.insertPets(Array.from({ length: PETS }, (_, i) => ({ name: `p${i}`, categoryId: BigInt(i) })))
  // Another instance holding the insert lock: every create of this one waits for it.
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await holder.connect()
  t.after(() => holder.end())
  const lock = (held: boolean) => holder.query(`SELECT ${held ? 'pg_advisory_lock' : 'pg_advisory_unlock'}($1, hashtext($2))`, [PET_INSERT_LOCK, schema])

  // Warm up: the key is looked up and each statement prepared on a connection or two.
  let next = 1
  await timedReads(app, next, 10)
  next += 10
  const usual: number[] = []
  const waiting: number[] = []
  const statuses: number[] = []
  const createStatuses: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    usual.push(...(await timedReads(app, next, READS_PER_ROUND)).durations)
    next += READS_PER_ROUND
    await lock(true)
    const creates = Array.from({ length: WAITING_CREATES * 2 }, (_, i) => app.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...app.auth, ...json, ...(i % 2 === 0 ? { 'idempotency-key': `waiting-${round}-${i}` } : {}) },
      payload: `{"name":"w${i}","categoryId":${i}}`
    }))
    // Long enough for every create to have asked for a connection.
    await sleep(200)
    try {
      const during = await timedReads(app, next, READS_PER_ROUND)
      waiting.push(...during.durations)
      statuses.push(...during.statuses)
      next += READS_PER_ROUND
    } finally {
      await lock(false)
    }
    createStatuses.push(...(await Promise.all(creates)).map((res) => res.statusCode))
    if (statuses.some((status) => status !== 200)) break
  }

  assert.deepEqual(statuses, Array(ROUNDS * READS_PER_ROUND).fill(200), 'every read gets 200 while creates wait')
  assert.ok(median(waiting) <= 2 * median(usual), `reads took ${median(waiting).toFixed(2)} ms at the median while creates waited, ${median(usual).toFixed(2)} ms with the lock free`)
  // A create that waited past DATABASE_CONNECT_TIMEOUT_MS for one of the creates' connections
  // gets 503 (documented); none fails otherwise, and each 201 is one pet.
  assert.deepEqual(createStatuses.filter((status) => status !== 201 && status !== 503), [])
  assert.equal(await app.store.countPets(), PETS + createStatuses.filter((status) => status === 201).length)
})
