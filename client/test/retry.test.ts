import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { test } from 'node:test'
import { createPetstoreClient, PetstoreError, type Pet } from '../src/index.ts'
import { startServer, startStub, type StubAction } from './servers.ts'

const unavailable = (retryAfter?: string): StubAction => ({
  status: 503,
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  body: '{"code":"unavailable","message":"The service is unavailable; retry later.","status":503}'
})
const limited = (retryAfter: string): StubAction => ({
  status: 429,
  headers: { 'retry-after': retryAfter, 'x-request-id': 'limited-1' },
  body: '{"code":"rate_limited","message":"Too many requests; retry after 120 s.","status":429}'
})

async function petsNamed (baseUrl: string, key: string, name: string): Promise<Pet[]> {
  const client = createPetstoreClient({ baseUrl, apiKey: key })
  const found: Pet[] = []
  for await (const pet of client.pets.all()) if (pet.name === name) found.push(pet)
  return found
}

test('createPet waits out a 503 Retry-After, retries with the same Idempotency-Key, and creates one pet', async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, ({ attempt }) => attempt === 1 ? unavailable('1') : 'forward')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key })
  const started = performance.now()
  const pet = await client.pets.create({ name: 'Patient', categoryId: 3 })
  const waited = performance.now() - started
  assert.deepEqual(pet, { id: 1n, name: 'Patient', categoryId: 3n })
  assert.ok(waited >= 950, `waited ${Math.round(waited)} ms for Retry-After: 1`)
  const keys = stub.seen.map((request) => request.headers['idempotency-key'])
  assert.equal(keys.length, 2)
  assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.equal(keys[1], keys[0])
  assert.deepEqual(await petsNamed(server.baseUrl, server.key, 'Patient'), [pet])

  await client.pets.create({ name: 'Second', categoryId: 4 })
  assert.notEqual(stub.seen[2]?.headers['idempotency-key'], keys[0], 'each call has its own key')
})

test('listPets retries a 429 with a short Retry-After, and also a response lost to a network error', async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, ({ attempt }) => attempt === 1 ? limited('0') : attempt === 2 ? 'forward-then-drop' : 'forward')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, retry: { baseDelayMs: 10 } })
  assert.deepEqual(await client.pets.list(), { pets: [], next: undefined })
  assert.equal(stub.seen.length, 3)
})

test('a 429 whose Retry-After is beyond the bound is not waited for: PetstoreError rate_limited', async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, () => limited('120'))
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key })
  await assert.rejects(client.pets.list(), (error: unknown) => {
    assert.ok(error instanceof PetstoreError)
    assert.deepEqual({ status: error.status, code: error.code, message: error.message, requestId: error.requestId, retryAfterSeconds: error.retryAfterSeconds },
      { status: 429, code: 'rate_limited', message: 'Too many requests; retry after 120 s.', requestId: 'limited-1', retryAfterSeconds: 120 })
    return true
  })
  assert.equal(stub.seen.length, 1)
})

test('retries are bounded: three attempts by default, then the last error', async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, () => unavailable())
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, retry: { baseDelayMs: 10 } })
  await assert.rejects(client.pets.list(), { name: 'PetstoreError', status: 503, code: 'unavailable' })
  assert.equal(stub.seen.length, 3)
  const once = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, retry: false })
  await assert.rejects(once.pets.list(), { status: 503 })
  assert.equal(stub.seen.length, 4)
})

test('other failures are never retried: 500, 400, 401', async (t) => {
  const server = await startServer(t)
  const actions: StubAction[] = [
    { status: 500, body: '{"code":"internal","message":"The request failed on the server (request id x).","status":500}' },
    'forward',
    'forward'
  ]
  const stub = await startStub(t, server.origin, ({ attempt }) => actions[attempt - 1] ?? 'forward')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, retry: { baseDelayMs: 10 } })
  await assert.rejects(client.pets.list(), { status: 500, code: 'internal' })
  await assert.rejects(client.pets.list({ limit: 0 }), { status: 400 })
  await assert.rejects(createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: 'psk_x' }).pets.list(), { status: 401 })
  assert.equal(stub.seen.length, 3)
})

test('no response at all, after the retries: PetstoreError network_error with the cause', async () => {
  const client = createPetstoreClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'psk_x', retry: { attempts: 2, baseDelayMs: 10 } })
  await assert.rejects(client.pets.list(), (error: unknown) => {
    assert.ok(error instanceof PetstoreError)
    assert.equal(error.status, 0)
    assert.equal(error.code, 'network_error')
    assert.ok(error.cause instanceof TypeError)
    return true
  })
})

/** Whether the service replays a createPet sent twice with one Idempotency-Key. */
async function serverReplaysIdempotentCreates (baseUrl: string, key: string): Promise<boolean> {
  const send = () => fetch(`${baseUrl}/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'probe-key-1' },
    body: '{"name":"idempotency probe","categoryId":1}'
  })
  const first = await send()
  const second = await send()
  return first.status === 201 && second.headers.get('idempotent-replayed') === 'true'
}

test('a createPet whose response was lost is retried and still creates exactly one pet', async (t) => {
  const server = await startServer(t)
  if (!await serverReplaysIdempotentCreates(server.baseUrl, server.key)) {
    const reason = 'the service does not replay Idempotency-Key yet, so a retried create would make two pets'
    process.stderr.write(`\n*** SKIPPED: ${reason} ***\n\n`)
    return t.skip(reason)
  }
  // The service creates the pet, then the connection drops before the response reaches the client.
  const stub = await startStub(t, server.origin, ({ attempt }) => attempt === 1 ? 'forward-then-drop' : 'forward')
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, retry: { baseDelayMs: 10 } })
  const pet = await client.pets.create({ name: 'Only once', categoryId: 9 })
  assert.equal(stub.seen.length, 2)
  assert.equal(stub.seen[1]?.headers['idempotency-key'], stub.seen[0]?.headers['idempotency-key'])
  assert.deepEqual(await petsNamed(server.baseUrl, server.key, 'Only once'), [pet])
})

test('a server whose every connection is busy answers 503 with Retry-After; reads and creates are retried and land once a connection frees', async (t) => {
  const server = await startServer(t, { MAX_CONNECTIONS: '2' })
  // Creates whose bodies are still on their way hold both connections, busy, for 500 ms.
  const received = { requests: 0 }
  server.app.server.on('request', () => { received.requests++ })
  const busy = await Promise.all([0, 1].map(async () => {
    const socket = connect({ port: Number(new URL(server.origin).port), host: '127.0.0.1' })
    socket.on('error', () => {})
    await once(socket, 'connect')
    socket.write(`POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`)
    return socket
  }))
  while (received.requests < 2) await new Promise((resolve) => setTimeout(resolve, 10))
  setTimeout(() => { for (const socket of busy) socket.destroy() }, 500)
  // Past twice MAX_CONNECTIONS Node would close a connection unheard: none may be.
  let dropped = 0
  server.app.server.on('drop', () => { dropped++ })
  const client = createPetstoreClient({ baseUrl: server.baseUrl, apiKey: server.key })
  // Both sent while the connection is busy; the listing asks for what the create does not make.
  const [pet, listed] = await Promise.all([client.pets.create({ name: 'Queued', categoryId: 5 }), client.pets.list({ status: 'sold' })])
  assert.deepEqual([pet, listed], [{ id: 1n, name: 'Queued', categoryId: 5n }, { pets: [], next: undefined }])
  assert.deepEqual(await petsNamed(server.baseUrl, server.key, 'Queued'), [pet])
  const refused = /^petstore_connections_refused_total (\d+)$/m.exec(await server.app.metrics.registry.getSingleMetricAsString('petstore_connections_refused_total'))
  assert.ok(Number(refused?.[1]) >= 2, `both calls were first refused: ${refused?.[0]}`)
  assert.equal(dropped, 0)
})
