import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPetstoreClient, PetstoreError, type Int64Mode, type PetstoreClientOptions } from '../src/index.ts'
import { entryBytes } from '../src/reply-cache.ts'
import { startServer, startStub } from './servers.ts'

const INT64_MAX = 9223372036854775807n
const ETAG = /^"[A-Za-z0-9_-]{22}"$/
const IMMUTABLE = /^private, max-age=\d+, immutable$/

/** What went over the wire: each request's path, the If-None-Match it sent, the status it got, and the ETag. */
interface Exchange { path: string, ifNoneMatch: string | undefined, status: number, etag: string | null }

/** A client on the real service whose fetch records every exchange. */
function recordingClient<I extends Int64Mode = 'bigint'> (options: Omit<PetstoreClientOptions<I>, 'fetch'>) {
  const exchanges: Exchange[] = []
  const client = createPetstoreClient({
    ...options,
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      const url = new URL(String(input))
      const headers = (init?.headers ?? {}) as Record<string, string>
      exchanges.push({ path: url.pathname + url.search, ifNoneMatch: headers['if-none-match'], status: response.status, etag: response.headers.get('etag') })
      return response
    }
  })
  return { client, exchanges }
}

test('a second pets.get sends the ETag in If-None-Match, gets 304, and gives the same pet, int64 exact, with meta.revalidated and the 304\'s headers', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  await store.createPet({ name: 'Rex', categoryId: INT64_MAX, status: 'sold' })
  const { client, exchanges } = recordingClient({ baseUrl, apiKey: key })
  const rex = { id: 1n, name: 'Rex', categoryId: INT64_MAX, status: 'sold' }

  const first = await client.pets.get(1n, { meta: true })
  const second = await client.pets.get(1n, { meta: true })
  const etag = exchanges[0]?.etag ?? assert.fail('the 200 has an ETag')
  assert.match(etag, ETAG)
  assert.deepEqual(exchanges, [
    { path: '/v1/pets/1', ifNoneMatch: undefined, status: 200, etag },
    { path: '/v1/pets/1', ifNoneMatch: etag, status: 304, etag }
  ])
  const summary = ({ data, meta }: typeof first) => ({
    data,
    status: meta.status,
    revalidated: meta.revalidated,
    requestIdIsTheResponses: meta.requestId !== undefined && meta.requestId === meta.headers.get('x-request-id'),
    rateLimit: { ...meta.rateLimit, resetSeconds: 'within the window' },
    cacheControl: IMMUTABLE.test(meta.headers.get('cache-control') ?? ''),
    etag: meta.headers.get('etag'),
    sunset: meta.headers.get('sunset')
  })
  const rateLimit = { policy: 'default', quota: 1000, windowSeconds: 60, remaining: 999, resetSeconds: 'within the window' }
  const common = { data: rex, requestIdIsTheResponses: true, rateLimit, cacheControl: true, etag, sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' }
  assert.deepEqual(summary(first), { ...common, status: 200, revalidated: false })
  // The 304 is not counted against the key: the same remaining.
  assert.deepEqual(summary(second), { ...common, status: 304, revalidated: true })
  assert.notEqual(second.meta.requestId, first.meta.requestId)
  // Each call gets its own objects, parsed from the kept text: changing one changes no other.
  assert.notEqual(second.data, first.data)
  second.data.name = 'changed by the caller'
  assert.deepEqual(await client.pets.get(1n), rex)
})

test('int64: \'string\' clients get the revalidated pet as exact decimal strings too', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  await store.createPet({ name: 'Max', categoryId: INT64_MAX })
  const { client, exchanges } = recordingClient({ baseUrl, apiKey: key, int64: 'string' })
  assert.deepEqual(await client.pets.get('1'), { id: '1', name: 'Max', categoryId: '9223372036854775807' })
  assert.deepEqual(await client.pets.get('1'), { id: '1', name: 'Max', categoryId: '9223372036854775807' })
  assert.deepEqual(exchanges.map(({ status }) => status), [200, 304])
})

test('the last page revalidates to 304; once a pet is added it comes back 200 with the new body, and that is what is kept', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  await store.createPet({ name: 'first', categoryId: 1n })
  const { client, exchanges } = recordingClient({ baseUrl, apiKey: key })
  const first = { id: 1n, name: 'first', categoryId: 1n }
  const second = { id: 2n, name: 'second', categoryId: 2n }

  assert.deepEqual(await client.pets.list({ limit: 5 }), { pets: [first], next: undefined })
  const revalidated = await client.pets.list({ limit: 5, meta: true })
  assert.deepEqual({ data: revalidated.data, status: revalidated.meta.status, revalidated: revalidated.meta.revalidated, cacheControl: revalidated.meta.headers.get('cache-control') },
    { data: { pets: [first], next: undefined }, status: 304, revalidated: true, cacheControl: 'private, no-cache' })
  await store.createPet({ name: 'second', categoryId: 2n })
  const grown = await client.pets.list({ limit: 5, meta: true })
  assert.deepEqual({ data: grown.data, status: grown.meta.status, revalidated: grown.meta.revalidated }, { data: { pets: [first, second], next: undefined }, status: 200, revalidated: false })
  assert.deepEqual(await client.pets.list({ limit: 5 }), { pets: [first, second], next: undefined })

  const [one, two] = [exchanges[0]?.etag, exchanges[2]?.etag]
  assert.ok(one && two && one !== two, `two ETags: ${one}, ${two}`)
  assert.deepEqual(exchanges, [
    { path: '/v1/pets?limit=5', ifNoneMatch: undefined, status: 200, etag: one },
    { path: '/v1/pets?limit=5', ifNoneMatch: one, status: 304, etag: one },
    { path: '/v1/pets?limit=5', ifNoneMatch: one, status: 200, etag: two },
    { path: '/v1/pets?limit=5', ifNoneMatch: two, status: 304, etag: two }
  ])
})

test('pets.all revalidates each page: a second walk is all 304s and gives the same pets, the next cursor read from each 304', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  for (let i = 1; i <= 3; i++) await store.createPet({ name: `pet ${i}`, categoryId: BigInt(i) })
  const { client, exchanges } = recordingClient({ baseUrl, apiKey: key })
  const walk = async () => {
    const ids: bigint[] = []
    for await (const pet of client.pets.all({ limit: 2 })) ids.push(pet.id)
    return ids
  }
  assert.deepEqual(await walk(), [1n, 2n, 3n])
  assert.deepEqual(await walk(), [1n, 2n, 3n])
  const summary = exchanges.map(({ path, ifNoneMatch, status }) => ({ path: path.replace(/cursor=[^&]+/, 'cursor=…'), sentTag: ifNoneMatch !== undefined, status }))
  assert.deepEqual(summary, [
    { path: '/v1/pets?limit=2', sentTag: false, status: 200 },
    { path: '/v1/pets?limit=2&cursor=…', sentTag: false, status: 200 },
    { path: '/v1/pets?limit=2', sentTag: true, status: 304 },
    { path: '/v1/pets?limit=2&cursor=…', sentTag: true, status: 304 }
  ])
  assert.equal(exchanges[3]?.path, exchanges[1]?.path)
})

test('cache.maxBytes bounds what is kept: the least recently used reply is evicted and its next read is unconditional', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  for (let i = 1; i <= 3; i++) await store.createPet({ name: `pet ${i}`, categoryId: BigInt(i) })
  // Every pet's entry is the same size (same-length path, ETag and body): room for two of them.
  const size = entryBytes('pets/1', { etag: '"' + 'x'.repeat(22) + '"', text: '{"id":1,"name":"pet 1","categoryId":1}' })
  const { client, exchanges } = recordingClient({ baseUrl, apiKey: key, cache: { maxBytes: 2 * size } })
  for (const id of [1, 2, 3, 3, 2, 1, 3]) assert.deepEqual(await client.pets.get(id), { id: BigInt(id), name: `pet ${id}`, categoryId: BigInt(id) })
  assert.deepEqual(exchanges.map(({ path, ifNoneMatch, status }) => `${path} ${ifNoneMatch === undefined ? 'unconditional' : 'If-None-Match'} ${status}`), [
    '/v1/pets/1 unconditional 200',
    '/v1/pets/2 unconditional 200',
    '/v1/pets/3 unconditional 200', // pet 1 evicted
    '/v1/pets/3 If-None-Match 304',
    '/v1/pets/2 If-None-Match 304',
    '/v1/pets/1 unconditional 200', // pet 3, the least recently used, evicted
    '/v1/pets/3 unconditional 200'
  ])
})

test('cache: false sends every read without If-None-Match and gets 200s; errors are never kept either way', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  await store.createPet({ name: 'Rex', categoryId: 1n })
  const { client, exchanges } = recordingClient({ baseUrl, apiKey: key, cache: false })
  for (let i = 0; i < 2; i++) {
    const { meta } = await client.pets.get(1, { meta: true })
    assert.deepEqual({ status: meta.status, revalidated: meta.revalidated }, { status: 200, revalidated: false })
    assert.deepEqual(await client.pets.list(), { pets: [{ id: 1n, name: 'Rex', categoryId: 1n }], next: undefined })
  }
  assert.deepEqual(exchanges.map(({ ifNoneMatch, status, etag }) => ({ ifNoneMatch, status, tagged: ETAG.test(etag ?? '') })),
    Array.from({ length: 4 }, () => ({ ifNoneMatch: undefined, status: 200, tagged: true })))

  const caching = recordingClient({ baseUrl, apiKey: key })
  for (let i = 0; i < 2; i++) await assert.rejects(caching.client.pets.get(404), { name: 'PetstoreError', status: 404, code: 'not_found' })
  assert.deepEqual(caching.exchanges.map(({ ifNoneMatch, status, etag }) => ({ ifNoneMatch, status, etag })),
    [{ ifNoneMatch: undefined, status: 404, etag: null }, { ifNoneMatch: undefined, status: 404, etag: null }])
})

test('a 304 to a read that named no ETag is PetstoreError unexpected_response, not retried', async (t) => {
  const server = await startServer(t)
  const stub = await startStub(t, server.origin, () => ({ status: 304, headers: { etag: '"not-asked-for"' } }))
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key, cache: false })
  const error = await client.pets.get(1).then(() => assert.fail('a 304 with no body to use'), (failure: unknown) => failure)
  assert.ok(error instanceof PetstoreError, String(error))
  assert.deepEqual({ status: error.status, code: error.code, message: error.message }, { status: 304, code: 'unexpected_response', message: 'HTTP 304 Not Modified to a request that named no ETag' })
  assert.equal(stub.seen.length, 1)
})

test('a 200 with Cache-Control: no-store, or with an ETag that is not an entity tag, is not kept: the next read names no ETag', async (t) => {
  const server = await startServer(t)
  const body = '{"id":1,"name":"Rex","categoryId":1}'
  const replies: Record<string, Record<string, string>> = {
    '/v1/pets/1': { etag: '"kept-not"', 'cache-control': 'private, No-Store' },
    '/v1/pets/2': { etag: 'unquoted' },
    '/v1/pets/3': { etag: 'W/"weak"' }
  }
  const stub = await startStub(t, server.origin, ({ url }) => ({ status: 200, headers: replies[url] ?? assert.fail(url), body }))
  const client = createPetstoreClient({ baseUrl: `${stub.origin}/v1`, apiKey: server.key })
  for (const id of [1, 2, 3, 1, 2, 3]) assert.deepEqual(await client.pets.get(id), { id: 1n, name: 'Rex', categoryId: 1n })
  // A weak tag is a tag: kept, and sent back (If-None-Match compares weakly).
  assert.deepEqual(stub.seen.map(({ url, headers }) => [url, headers['if-none-match']]), [
    ['/v1/pets/1', undefined], ['/v1/pets/2', undefined], ['/v1/pets/3', undefined],
    ['/v1/pets/1', undefined], ['/v1/pets/2', undefined], ['/v1/pets/3', 'W/"weak"']
  ])
})

test('a 304 whose entry was evicted while it was on its way still gives the body its ETag named', async (t) => {
  const { baseUrl, key, store } = await startServer(t)
  for (let i = 1; i <= 2; i++) await store.createPet({ name: `pet ${i}`, categoryId: BigInt(i) })
  // Room for one pet's entry: keeping pet 2 evicts pet 1.
  const size = entryBytes('pets/1', { etag: '"' + 'x'.repeat(22) + '"', text: '{"id":1,"name":"pet 1","categoryId":1}' })
  let release = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const statuses: string[] = []
  const client = createPetstoreClient({
    baseUrl,
    apiKey: key,
    cache: { maxBytes: size },
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      statuses.push(`${new URL(String(input)).pathname} ${response.status}`)
      // The revalidation of pet 1 is held until pet 2's reply has been kept.
      if (response.status === 304) await held
      return response
    }
  })
  await client.pets.get(1)
  const revalidating = client.pets.get(1, { meta: true })
  assert.deepEqual(await client.pets.get(2), { id: 2n, name: 'pet 2', categoryId: 2n })
  release()
  const { data, meta } = await revalidating
  assert.deepEqual({ data, status: meta.status, revalidated: meta.revalidated }, { data: { id: 1n, name: 'pet 1', categoryId: 1n }, status: 304, revalidated: true })
  // Pet 1 stays evicted: its next read is a full one.
  await client.pets.get(1)
  // The 304 and pet 2's 200 travel at the same time: either may arrive first.
  assert.deepEqual([statuses[0], statuses.slice(1, 3).sort(), statuses[3], statuses.length], ['/v1/pets/1 200', ['/v1/pets/1 304', '/v1/pets/2 200'], '/v1/pets/1 200', 4])
})
