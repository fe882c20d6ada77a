import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { createPetstoreClient, PetstoreError, type Pet, type WithMeta } from '../src/index.ts'
import { startServer, startStub } from './servers.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Whether two types are the same, checked by tsc. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

async function failure (promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  assert.fail('expected the call to fail')
}

test('an attempt with no response within timeoutMs is retried, and after the last one the call is PetstoreError timeout', { timeout: 10_000 }, async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, () => 'hang')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, timeoutMs: 100, retry: { attempts: 2, baseDelayMs: 0 } })
  const error = await failure(client.pets.list())
  assert.ok(error instanceof PetstoreError, String(error))
  assert.deepEqual({ status: error.status, code: error.code, message: error.message, cause: (error.cause as Error).name },
    { status: 0, code: 'timeout', message: 'GET /v1/pets got no response within 100 ms', cause: 'TimeoutError' })
  assert.equal(stub.seen.length, 2)
})

test('the timeout covers a response whose body stops coming; a timed-out create is sent again with its Idempotency-Key and makes one pet', { timeout: 10_000 }, async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, ({ attempt }) => attempt === 1 ? 'stall' : 'forward')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, timeoutMs: 2000, retry: { baseDelayMs: 0 } })
  const pet = await client.pets.create({ name: 'Slow', categoryId: 5 })
  assert.deepEqual(pet, { id: 1n, name: 'Slow', categoryId: 5n })
  assert.equal(stub.seen.length, 2)
  assert.match(String(stub.seen[0]?.headers['idempotency-key']), UUID)
  assert.equal(stub.seen[1]?.headers['idempotency-key'], stub.seen[0]?.headers['idempotency-key'])
  assert.deepEqual((await createPetstoreClient({ baseUrl: server.baseUrl, apiKey: server.key }).pets.list()).pets, [pet])
})

test('a call whose signal aborts rejects with the signal\'s reason, whatever it is, and is not retried', { timeout: 10_000 }, async (t) => {
  const server = await startServer(t)
  const controller = new AbortController()
  const reason = new Error('the user left')
  // The stub aborts the call as soon as its request arrives, then never responds.
  const stub = await startStub(t, server.origin, () => { controller.abort(reason); return 'hang' })
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, retry: { baseDelayMs: 0 } })
  assert.equal(await failure(client.pets.get(1, { signal: controller.signal })), reason)
  assert.equal(stub.seen.length, 1)

  const other = new AbortController()
  const stub2 = await startStub(t, server.origin, () => { other.abort('left the page'); return 'hang' })
  const client2 = createPetstoreClient({ baseUrl: `${stub2.origin}/v1`, apiKey: server.key })
  assert.equal(await failure(client2.pets.create({ name: 'Rex', categoryId: 1 }, { signal: other.signal })), 'left the page')

  // Aborted before the call: nothing is sent.
  assert.equal(await failure(client.pets.list({ signal: AbortSignal.abort(reason) })), reason)
  assert.equal(stub.seen.length, 1)
})

test('pets.all stops with the signal\'s reason when it aborts between pages', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  for (let i = 1; i <= 3; i++) await store.createPet({ name: `pet ${i}`, categoryId: BigInt(i) })
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  const controller = new AbortController()
  const seen: bigint[] = []
  const walk = async () => {
    for await (const pet of client.pets.all({ limit: 2, signal: controller.signal })) {
      seen.push(pet.id)
      controller.abort(new Error('enough'))
    }
  }
  assert.deepEqual(await failure(walk()), new Error('enough'))
  assert.deepEqual(seen, [1n, 2n])
})

test('{ meta: true } gives the data with the response\'s status, request id, rate limit and headers', async (t) => {
  const { baseUrl, key } = await startServer(t, { RATE_LIMIT_PER_MINUTE: '5' })
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  const summary = ({ data, meta }: WithMeta<unknown>) => {
    assert.equal(meta.requestId, meta.headers.get('x-request-id'))
    const reset = meta.rateLimit?.resetSeconds ?? 0
    assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`)
    return { data, status: meta.status, requestId: UUID.test(meta.requestId ?? ''), rateLimit: { ...meta.rateLimit, resetSeconds: 'within the window' } }
  }
  const limit = (remaining: number) => ({ policy: 'default', quota: 5, windowSeconds: 60, remaining, resetSeconds: 'within the window' })

  const created = await client.pets.create({ name: 'Rex', categoryId: 7 }, { meta: true })
  const rex = { id: 1n, name: 'Rex', categoryId: 7n }
  assert.deepEqual(summary(created), { data: rex, status: 201, requestId: true, rateLimit: limit(4) })
  assert.equal(created.meta.headers.get('location'), `${baseUrl}/pets/1`)
  assert.deepEqual(summary(await client.pets.list({ meta: true })), { data: { pets: [rex], next: undefined }, status: 200, requestId: true, rateLimit: limit(3) })
  assert.deepEqual(summary(await client.pets.get(1n, { meta: true })), { data: rex, status: 200, requestId: true, rateLimit: limit(2) })
  // Without it, the data alone, as before.
  const plain = await client.pets.get(1n)
  assert.deepEqual(plain, rex)
  assert.deepEqual(await client.pets.list({ meta: false }), { pets: [rex], next: undefined })

  const typed: [Same<typeof created, WithMeta<Pet>>, Same<typeof plain, Pet>] = [true, true]
  assert.deepEqual(typed, [true, true])
})

test('int64: \'string\' gives ids as exact decimal strings that JSON.stringify takes, and accepts them back', async (t) => {
  const { baseUrl, key } = await startServer(t)
  const client = createPetstoreClient({ baseUrl, apiKey: key, int64: 'string' })
  const created = await client.pets.create({ name: 'Rex', categoryId: '9223372036854775807', status: 'sold' })
  assert.deepEqual(created, { id: '1', name: 'Rex', categoryId: '9223372036854775807', status: 'sold' })
  assert.equal(JSON.stringify(created), '{"id":"1","name":"Rex","categoryId":"9223372036854775807","status":"sold"}')
  assert.deepEqual(await client.pets.get(created.id), created)
  assert.deepEqual(await client.pets.list(), { pets: [created], next: undefined })
  const all: Array<Pet<'string'>> = []
  for await (const pet of client.pets.all()) all.push(pet)
  assert.deepEqual(all, [created])
  // The bigint client reads the same pet exactly.
  assert.deepEqual(await createPetstoreClient({ baseUrl, apiKey: key }).pets.get('1'), { id: 1n, name: 'Rex', categoryId: 9223372036854775807n, status: 'sold' })

  const typed: [Same<typeof created.id, string>, Same<Pet['id'], bigint>] = [true, true]
  assert.deepEqual(typed, [true, true])
})

test('listPets, createPet and getPet are deprecated aliases that call pets.list, pets.create and pets.get', async (t) => {
  const { baseUrl, key } = await startServer(t)
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  const create = t.mock.method(client.pets, 'create')
  const list = t.mock.method(client.pets, 'list')
  const get = t.mock.method(client.pets, 'get')
  const pet = await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'alias-1' })
  assert.deepEqual(pet, { id: 1n, name: 'Rex', categoryId: 1n })
  assert.deepEqual(await client.listPets({ limit: 5 }), { pets: [pet], next: undefined })
  assert.deepEqual(await client.getPet(1), pet)
  assert.deepEqual([create, list, get].map((mock) => mock.mock.calls.map((call) => call.arguments)), [
    [[{ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'alias-1' }]],
    [[{ limit: 5 }]],
    [[1]]
  ])
  // The built declarations carry @deprecated, so editors strike the old names through.
  const declarations = readFileSync(new URL('../dist/client.d.ts', import.meta.url), 'utf8')
  for (const [name, replacement] of [['listPets', 'pets.list'], ['createPet', 'pets.create'], ['getPet', 'pets.list']] as const) {
    assert.match(declarations, new RegExp(`/\\*\\* @deprecated Use \`${replacement.replace('.', '\\.')}[^\\n]*\\*/\\n\\s*${name}\\(`), name)
  }
})
