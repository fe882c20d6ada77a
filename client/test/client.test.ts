import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { createPetstoreClient, PetstoreError, type Pet } from '../src/index.ts'
import { startServer, startStub } from './servers.ts'
import { scrape } from '../../test/helpers/scrape.ts'

const INT64_MAX = 9223372036854775807n

test('pets.create, pets.list and pets.get round-trip a pet, categoryId 9223372036854775807 exact', async (t) => {
  const { baseUrl, key } = await startServer(t)
  const client = createPetstoreClient({ baseUrl, apiKey: key, onWarning: () => assert.fail('no sunset warning years ahead') })
  const created = await client.pets.create({ name: 'Rex', categoryId: INT64_MAX, status: 'available' })
  assert.deepEqual(created, { id: 1n, name: 'Rex', categoryId: INT64_MAX, status: 'available' })
  const plain = await client.pets.create({ name: 'Tom', categoryId: -7 })
  assert.deepEqual(plain, { id: 2n, name: 'Tom', categoryId: -7n })
  assert.deepEqual(await client.pets.list(), { pets: [created, plain], next: undefined })
  assert.deepEqual(await client.pets.list({ status: 'available' }), { pets: [created], next: undefined })
  assert.deepEqual(await client.pets.get(1n), created)
})

test('an id of 9223372036854775807 is read, asked for and listed exactly', async (t) => {
  const { baseUrl, key, databasePath } = await startServer(t)
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  await client.pets.create({ name: 'first', categoryId: 1 })
  const db = new DatabaseSync(databasePath)
  db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'pets'").run(INT64_MAX - 1n)
  db.close()
  const max = await client.pets.create({ name: 'last possible', categoryId: INT64_MAX })
  assert.deepEqual(max, { id: INT64_MAX, name: 'last possible', categoryId: INT64_MAX })
  assert.deepEqual(await client.pets.get(INT64_MAX), max)
  const all: Pet[] = []
  for await (const pet of client.pets.all()) all.push(pet)
  assert.deepEqual(all.map((pet) => pet.id), [1n, INT64_MAX])
})

test('pets.all follows Link rel="next" across 250 pets, in id order, each once', async (t) => {
  const { store, origin, key } = await startServer(t)
  for (let i = 1; i <= 250; i++) await store.createPet({ name: `pet ${i}`, categoryId: BigInt(i), status: i % 5 === 0 ? 'sold' : 'available' })
  const stub = await startStub(t, origin, () => 'forward')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: key })

  const all: Pet[] = []
  for await (const pet of client.pets.all()) all.push(pet)
  assert.deepEqual(all.map((pet) => pet.id), Array.from({ length: 250 }, (_, i) => BigInt(i + 1)))
  assert.deepEqual(stub.seen.map((request) => request.url.replace(/cursor=[^&]+/, 'cursor=…')), ['/v1/pets?limit=100', '/v1/pets?limit=100&cursor=…', '/v1/pets?limit=100&cursor=…'])

  const sold: bigint[] = []
  for await (const pet of client.pets.all({ status: 'sold', limit: 20 })) sold.push(pet.id)
  assert.deepEqual(sold, Array.from({ length: 50 }, (_, i) => BigInt((i + 1) * 5)))
  assert.equal(stub.seen.length, 3 + 3)
})

async function failure (promise: Promise<unknown>): Promise<PetstoreError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof PetstoreError, `a PetstoreError, got ${String(error)}`)
    return error
  }
  assert.fail('expected the call to fail')
}

const summary = (error: PetstoreError) => ({ status: error.status, code: error.code, message: error.message, details: error.details, hasRequestId: typeof error.requestId === 'string' && error.requestId.length > 0 })

test('400, 401 and 404 come back as PetstoreError with status, code, message and request id', async (t) => {
  const { baseUrl, key } = await startServer(t)
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  assert.deepEqual(summary(await failure(client.pets.create({ name: ' ', categoryId: 1 }))), {
    status: 400,
    code: 'invalid_request',
    message: 'Invalid request: body.name must not be blank and must not contain control characters.',
    details: [{ field: 'body.name', message: 'must not be blank and must not contain control characters' }],
    hasRequestId: true
  })
  const stranger = createPetstoreClient({ baseUrl, apiKey: 'psk_' + 'A'.repeat(43) })
  assert.deepEqual(summary(await failure(stranger.pets.list())), {
    status: 401, code: 'unauthorized', message: 'A valid API key is required: send Authorization: Bearer <key>.', details: undefined, hasRequestId: true
  })
  const notFound = await failure(client.pets.get(404))
  assert.deepEqual(summary(notFound), { status: 404, code: 'not_found', message: 'No pet has id 404.', details: undefined, hasRequestId: true })
  assert.ok(notFound instanceof Error)
  assert.equal(notFound.name, 'PetstoreError')
})

test('the request id of a failure is the X-Request-Id the service sent', async (t) => {
  const { baseUrl, key } = await startServer(t)
  const sent: Array<string | null> = []
  const client = createPetstoreClient({
    baseUrl,
    apiKey: key,
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      sent.push(response.headers.get('x-request-id'))
      return response
    }
  })
  const error = await failure(client.pets.list({ limit: 1000 }))
  assert.equal(error.status, 400)
  assert.equal(sent.length, 1)
  assert.match(sent[0] ?? '', /^[0-9a-f-]{36}$/)
  assert.equal(error.requestId, sent[0])
})

test('pets.get after its sunset is 410 gone', async (t) => {
  const { baseUrl, key } = await startServer(t, { DEPRECATION_DATE: '2020-01-01T00:00:00Z', SUNSET_DATE: '2021-01-01T00:00:00Z' })
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  assert.deepEqual(summary(await failure(client.pets.get(1))), {
    status: 410, code: 'gone', message: 'getPet was removed on Fri, 01 Jan 2021 00:00:00 GMT; use GET /pets with the status filter.', details: undefined, hasRequestId: true
  })
})

test('pets.get warns once when the Sunset is within 180 days, and not when it is further', async (t) => {
  const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z')
  const near = await startServer(t, { SUNSET_DATE: inDays(179) })
  const warnings: string[] = []
  const client = createPetstoreClient({ baseUrl: near.baseUrl, apiKey: near.key, onWarning: (message) => warnings.push(message) })
  const pet = await client.pets.create({ name: 'Rex', categoryId: 1 })
  for (let i = 0; i < 3; i++) assert.deepEqual(await client.pets.get(pet.id), pet)
  assert.equal(warnings.length, 1)
  assert.match(warnings[0]!, /^Petstore: getPet is deprecated and is removed on .+ GMT; use pets\.list\(\{ status \}\) instead\.$/)

  const far = await startServer(t, { SUNSET_DATE: inDays(181) })
  const calm = createPetstoreClient({ baseUrl: far.baseUrl, apiKey: far.key, onWarning: (message) => warnings.push(message) })
  const other = await calm.pets.create({ name: 'Tom', categoryId: 2 })
  await calm.pets.get(other.id)
  assert.equal(warnings.length, 1)
})

test('the service\'s own rate limit comes back as PetstoreError 429 rate_limited with its Retry-After, and is counted in /metrics', async (t) => {
  const { app, baseUrl, key } = await startServer(t, { RATE_LIMIT_PER_MINUTE: '2' })
  const attempts: number[] = []
  // Without the cache every list is a full request: revalidations (304) are not counted.
  const client = createPetstoreClient({
    baseUrl,
    apiKey: key,
    retry: false,
    cache: false,
    fetch: async (input, init) => { const response = await fetch(input, init); attempts.push(response.status); return response }
  })
  await client.pets.list()
  await client.pets.list()
  const error = await failure(client.pets.list())
  assert.deepEqual({ status: error.status, code: error.code, hasRequestId: typeof error.requestId === 'string' }, { status: 429, code: 'rate_limited', hasRequestId: true })
  assert.match(error.message, /^This API key has used its 2 requests of the current minute/)
  assert.ok(error.retryAfterSeconds !== undefined && error.retryAfterSeconds >= 1 && error.retryAfterSeconds <= 60, `Retry-After ${error.retryAfterSeconds}`)
  assert.deepEqual(attempts, [200, 200, 429])
  const metrics = await scrape(app)
  assert.match(metrics, /^petstore_rate_limited_total 1$/m)
})
