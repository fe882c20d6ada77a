import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, issueKey, json, type TestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { scrape } from '../helpers/scrape.ts'
import { purgeExpiredRecords } from '../../src/pets/idempotency.ts'

const HOUR_MS = 3_600_000

function create (t: TestApp, idempotencyKey: string | undefined, payload: string, authorization = t.auth.authorization) {
  const headers: Record<string, string> = { authorization, ...json }
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey
  return t.inject({ method: 'POST', url: '/v1/pets', headers, payload })
}

describe('createPet with Idempotency-Key', () => {
  test('a repeat with the same key and body gets the first response again, marked as a replay, and creates nothing', async (t) => {
    const app = await buildTestApp(t)
    const first = await create(app, 'order-1', '{"name":"Rex","categoryId":7,"status":"available"}')
    const again = await create(app, 'order-1', '{"name":"Rex","categoryId":7,"status":"available"}')
    assert.equal(first.statusCode, 201)
    assert.equal(again.statusCode, 201)
    assert.equal(first.body, '{"id":1,"name":"Rex","categoryId":7,"status":"available"}')
    assert.equal(again.body, first.body)
    assert.equal(again.headers.location, first.headers.location)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.equal(await app.store.countPets(), 1)
  })

  test('without a key, the same body twice makes two pets', async (t) => {
    const app = await buildTestApp(t)
    const bodies = [await create(app, undefined, '{"name":"Rex","categoryId":7}'), await create(app, undefined, '{"name":"Rex","categoryId":7}')]
    assert.deepEqual(bodies.map((r) => JSON.parse(r.body).id), [1, 2])
  })

  test('the quoted and bare spellings of a key are one key; field order, spacing and ignored fields are one body', async (t) => {
    const app = await buildTestApp(t)
    await create(app, 'a\\"b', '{"name":"Rex","categoryId":7}')
    const quoted = await create(app, '"a\\\\\\"b"', '{ "categoryId" : 7, "name" : "Rex", "color": "brown" }')
    assert.equal(quoted.statusCode, 201)
    assert.equal(quoted.headers['idempotent-replayed'], 'true')
    assert.equal(quoted.body, '{"id":1,"name":"Rex","categoryId":7}')
    assert.equal(await app.store.countPets(), 1)
  })

  test('the same key with another body is 422 idempotency_conflict and writes nothing, down to the last int64 digit', async (t) => {
    const app = await buildTestApp(t)
    await create(app, 'order-2', '{"name":"Rex","categoryId":9223372036854775807}')
    for (const other of ['{"name":"Rex","categoryId":9223372036854775806}', '{"name":"Rexy","categoryId":9223372036854775807}', '{"name":"Rex","categoryId":9223372036854775807,"status":"sold"}']) {
      const res = await create(app, 'order-2', other)
      assertError(res, 422, 'idempotency_conflict', 'This Idempotency-Key was already used with a different body; use a new key for a new request.', { label: other })
    }
    assert.equal(await app.store.countPets(), 1)
  })

  test("keys are scoped per API key: another caller's identical key and body make its own pet", async (t) => {
    const app = await buildTestApp(t)
    const other = await issueKey(app.store, 'other caller')
    const mine = await create(app, 'shared-name', '{"name":"Rex","categoryId":7}')
    const theirs = await create(app, 'shared-name', '{"name":"Rex","categoryId":7}', `Bearer ${other.key}`)
    assert.equal(theirs.statusCode, 201)
    assert.equal(theirs.headers['idempotent-replayed'], undefined)
    assert.equal(theirs.body, '{"id":2,"name":"Rex","categoryId":7}')
    assert.equal(mine.body, '{"id":1,"name":"Rex","categoryId":7}')
  })

  test('a record lives IDEMPOTENCY_TTL_HOURS: replayed until then, and the key makes a new pet from that instant on', async (t) => {
    let clock = Date.parse('2027-03-01T12:00:00Z')
    const app = await buildTestApp(t, { now: () => clock, env: { IDEMPOTENCY_TTL_HOURS: '24' } })
    await create(app, 'daily', '{"name":"Rex","categoryId":7}')
    clock += 24 * HOUR_MS - 1
    const lastReplay = await create(app, 'daily', '{"name":"Rex","categoryId":7}')
    assert.equal(lastReplay.headers['idempotent-replayed'], 'true')
    clock += 1
    const reborn = await create(app, 'daily', '{"name":"Max","categoryId":8}')
    assert.equal(reborn.statusCode, 201)
    assert.equal(reborn.headers['idempotent-replayed'], undefined)
    // A new pet: its id is the store's next one, which need not be 2 (PostgreSQL's sequence
    // may have moved on a replay).
    const { id, ...fields } = JSON.parse(reborn.body)
    assert.deepEqual({ newId: id > 1, fields }, { newId: true, fields: { name: 'Max', categoryId: 8 } })
    assert.equal(await app.store.countPets(), 2)
    const replayOfNew = await create(app, 'daily', '{"name":"Max","categoryId":8}')
    assert.equal(replayOfNew.body, reborn.body)
    assert.equal(await purgeExpiredRecords(app.store, new Date(clock + 24 * HOUR_MS).toISOString()), 1)
  })

  test('a malformed Idempotency-Key is 400 naming the header, and creates nothing', async (t) => {
    const app = await buildTestApp(t)
    const malformed = ['', ' ', 'a b', 'a, b', 'a'.repeat(256), '"', '""', '"a', '"a\\x"', `"${'a'.repeat(256)}"`, 'caf\u00e9', 'tab\there']
    for (const key of malformed) {
      const res = await create(app, key, '{"name":"Rex","categoryId":7}')
      assertError(res, 400, 'invalid_request', 'Invalid request: header.idempotency-key is not valid.', {
        details: [{ field: 'header.idempotency-key', message: 'is not valid' }], label: JSON.stringify(key)
      })
    }
    assert.equal(await app.store.countPets(), 0)
  })

  test('the longest keys are accepted, bare and quoted (escapes count as one character)', async (t) => {
    const app = await buildTestApp(t)
    const longest = ['k'.repeat(255), `"${'\\"'.repeat(255)}"`, '!#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~']
    for (const key of longest) {
      const res = await create(app, key, '{"name":"Rex","categoryId":7}')
      assert.equal(res.statusCode, 201, key)
      assert.equal(res.headers['idempotent-replayed'], undefined, key)
    }
  })

  test('authentication comes first: no key and a malformed Idempotency-Key is 401', async (t) => {
    const app = await buildTestApp(t)
    const res = await create(app, 'a b', '{"name":"Rex","categoryId":7}', 'Bearer psk_not-a-key')
    assert.equal(res.statusCode, 401)
  })

  test('concurrent requests with one key make exactly one pet, and every response carries it', async (t) => {
    const app = await buildTestApp(t)
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(app, 'burst', '{"name":"Rex","categoryId":7}')))
    assert.deepEqual(new Set(responses.map((r) => `${r.statusCode} ${r.body} ${r.headers.location}`)), new Set([`201 {"id":1,"name":"Rex","categoryId":7} ${responses[0]!.headers.location}`]))
    assert.equal(responses.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1)
    assert.equal(await app.store.countPets(), 1)
  })

  test('a create that fails on the server records nothing: the retry with the same key creates the pet', async (t) => {
    let failNext = true
    const app = await buildTestApp(t, {
      faults: {
        beforeStoreCall (operation) {
          if (operation === 'createPetIdempotently' && failNext) {
            failNext = false
            throw new Error('disk I/O error')
          }
        }
      }
    })
    const failed = await create(app, 'retry-me', '{"name":"Rex","categoryId":7}')
    assert.equal(failed.statusCode, 500)
    const retried = await create(app, 'retry-me', '{"name":"Rex","categoryId":7}')
    assert.equal(retried.statusCode, 201)
    assert.equal(retried.headers['idempotent-replayed'], undefined)
    assert.equal(retried.body, '{"id":1,"name":"Rex","categoryId":7}')
  })

  test('petstore_pets_created_total counts each pet stored, once: never a replay, a conflict or a failed create', async (t) => {
    let failNext = false
    const app = await buildTestApp(t, {
      faults: {
        beforeStoreCall (operation) {
          if (operation.startsWith('createPet') && failNext) {
            failNext = false
            throw new Error('disk I/O error')
          }
        }
      }
    })
    const created = async () => Number(/^petstore_pets_created_total (\d+)$/m.exec(await scrape(app.app))?.[1])
    const statuses: number[] = []
    for (const [key, name] of [['a', 'Rex'], ['a', 'Rex'], ['a', 'Tom'], [undefined, 'Tom'], ['b', 'Kit']] as const) {
      statuses.push((await create(app, key, JSON.stringify({ name, categoryId: 7 }))).statusCode)
    }
    failNext = true
    statuses.push((await create(app, undefined, '{"name":"Lost","categoryId":7}')).statusCode)
    failNext = true
    statuses.push((await create(app, 'c', '{"name":"Lost","categoryId":7}')).statusCode)
    assert.deepEqual(statuses, [201, 201, 422, 201, 201, 500, 500])
    assert.deepEqual([await created(), await app.store.countPets()], [3, 3])
  })
})
