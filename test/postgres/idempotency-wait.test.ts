import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import pg from 'pg'
import { fingerprintOf } from '../../src/pets/idempotency.ts'
import { buildTestApp, json, type TestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { TEST_DATABASE_URL } from '../helpers/pg-schema.ts'

/*
 * Another instance is in the middle of a create with the same Idempotency-Key: played here by
 * a transaction of the test's own that holds the key's row and has not committed yet.
 */

const BODY = '{"name":"Rex","categoryId":7}'

async function holdKey (t: TestContext, app: TestApp, key: string, fingerprint: string) {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${new URL(app.url).searchParams.get('schema')}` })
  await client.connect()
  t.after(() => client.end())
  await client.query('BEGIN')
  const { rows: [pet] } = await client.query<{ id: string }>("INSERT INTO pets (name, category_id) VALUES ('Rex', 7) RETURNING id")
  await client.query('INSERT INTO idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at) VALUES ($1, $2, $3, $4, now(), now() + interval \'1 day\')',
    [app.keyId, key, fingerprint, pet!.id])
  return { client, petId: pet!.id }
}

const create = (app: TestApp, key: string) =>
  app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, ...json, 'idempotency-key': key }, payload: BODY })

test('a request whose key another transaction holds waits for it, then replays its pet', async (t) => {
  const app = await buildTestApp(t)
  const held = await holdKey(t, app, 'shared', fingerprintOf({ name: 'Rex', categoryId: 7n }))
  const waiting = create(app, 'shared')
  await new Promise((resolve) => setTimeout(resolve, 300))
  await held.client.query('COMMIT')
  const res = await waiting
  assert.deepEqual([res.statusCode, res.headers['idempotent-replayed'], res.body], [201, 'true', `{"id":${held.petId},"name":"Rex","categoryId":7}`])
  assert.equal(await app.store.countPets(), 1)
})

test('past the wait, 409 request_in_progress with Retry-After; once the other rolls back, the retry creates', async (t) => {
  const app = await buildTestApp(t)
  const held = await holdKey(t, app, 'stuck', fingerprintOf({ name: 'Rex', categoryId: 7n }))
  const started = Date.now()
  const res = await create(app, 'stuck')
  assert.ok(Date.now() - started >= 1900, `the response came after ${Date.now() - started} ms`)
  assertError(res, 409, 'request_in_progress', 'A request with this Idempotency-Key is still being processed; retry after the time in Retry-After.')
  assert.equal(res.headers['retry-after'], '1')
  await held.client.query('ROLLBACK')
  const retried = await create(app, 'stuck')
  assert.deepEqual([retried.statusCode, retried.headers['idempotent-replayed']], [201, undefined])
  assert.equal(await app.store.countPets(), 1)
})
