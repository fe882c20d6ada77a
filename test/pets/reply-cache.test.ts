import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import Fastify, { type InjectOptions } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { createMetrics } from '../../src/ops/metrics.ts'
import { replyCache } from '../../src/pets/reply-cache.ts'
import type { Store } from '../../src/store/types.ts'
import { encodeCursor } from '../../src/contract/int64.ts'
import { nextPath, seedPets } from '../helpers/api-steps.ts'
import { buildTestApp, createTestStore, injectChecked, issueKey, testConfig, type TestApp } from '../helpers/app.ts'

/**
 * The reply cache, seen through the routes: a found pet and a full page are read from the
 * store once, anything that can still change (the last page, a 404) every time; at most
 * REPLY_CACHE_ENTRIES replies of each kind and at most REPLY_CACHE_MAX_BYTES together, the
 * least recently used dropped first; none at all where the store does not assign ids in commit
 * order.
 */

/** Counts the store reads of the two cached operations. */
function storeReads () {
  const reads = { getPet: 0, listPets: 0 }
  const beforeStoreCall = (operation: string) => {
    if (operation === 'getPet' || operation === 'listPets') reads[operation]++
  }
  return { reads, faults: { beforeStoreCall } }
}

async function get (api: Pick<TestApp, 'inject' | 'auth'>, url: string) {
  const res = await api.inject({ url, headers: api.auth })
  return { status: res.statusCode, body: res.body, link: res.headers.link }
}

test('a found pet is read from the store once, then served from the cache with the same body', async (t) => {
  const { reads, faults } = storeReads()
  const api = await buildTestApp(t, { faults })
  const [pet] = await seedPets(api.store, ['sold'])
  const first = await get(api, `/v1/pets/${pet!.id}`)
  const second = await get(api, `/v1/pets/${pet!.id}`)
  assert.deepEqual({ status: first.status, body: first.body }, { status: 200, body: `{"id":${pet!.id},"name":"pet 0","categoryId":0,"status":"sold"}` })
  assert.deepEqual(second, first)
  assert.deepEqual(reads, { getPet: 1, listPets: 0 })
})

test('an id no pet has is read from the store on every request: a 404 is never kept', async (t) => {
  const { reads, faults } = storeReads()
  const api = await buildTestApp(t, { faults })
  for (let i = 0; i < 3; i++) assert.equal((await get(api, '/v1/pets/424242')).status, 404)
  assert.deepEqual(reads, { getPet: 3, listPets: 0 })
})

test('a full page is read from the store once; the last page every time, so it shows pets added since', async (t) => {
  const { reads, faults } = storeReads()
  const api = await buildTestApp(t, { faults })
  await seedPets(api.store, ['available', 'available', 'available'])
  const full = await get(api, '/v1/pets?limit=2')
  assert.deepEqual(await get(api, '/v1/pets?limit=2'), full)
  assert.deepEqual(reads, { getPet: 0, listPets: 1 })

  const last = nextPath(full.link)!
  assert.equal(JSON.parse((await get(api, last)).body).length, 1)
  await seedPets(api.store, ['pending'])
  assert.equal(JSON.parse((await get(api, last)).body).length, 2)
  assert.deepEqual(reads, { getPet: 0, listPets: 3 })
})

test('REPLY_CACHE_ENTRIES=0 keeps nothing: every read goes to the store', async (t) => {
  const { reads, faults } = storeReads()
  const api = await buildTestApp(t, { faults, env: { REPLY_CACHE_ENTRIES: '0' } })
  const [pet] = await seedPets(api.store, ['available', 'available', 'available'])
  for (let i = 0; i < 2; i++) {
    assert.equal((await get(api, `/v1/pets/${pet!.id}`)).status, 200)
    assert.equal((await get(api, '/v1/pets?limit=2')).status, 200)
  }
  assert.deepEqual(reads, { getPet: 2, listPets: 2 })
})

test('at most REPLY_CACHE_ENTRIES found pets are kept, the least recently used dropped first', async (t) => {
  const { reads, faults } = storeReads()
  const api = await buildTestApp(t, { faults, env: { REPLY_CACHE_ENTRIES: '2' } })
  const [a, b, c] = await seedPets(api.store, [undefined, undefined, undefined])
  const readsFor = async (pet: typeof a) => {
    const before = reads.getPet
    assert.equal((await get(api, `/v1/pets/${pet!.id}`)).status, 200)
    return reads.getPet - before
  }
  // a and b are kept; a is read again, so c pushes b out; b back in pushes c out, as a is newer.
  assert.deepEqual([await readsFor(a), await readsFor(b), await readsFor(a), await readsFor(c)], [1, 1, 0, 1])
  assert.deepEqual([await readsFor(a), await readsFor(b), await readsFor(a), await readsFor(c)], [0, 1, 0, 1])
})

/** Pets with the longest names, of characters V8 keeps at two bytes each (emoji: two each). */
async function seedLongNames (store: Store, count: number) {
  const pets = []
  for (let i = 0; i < count; i++) pets.push(await store.createPet({ name: `${'🐕'.repeat(199)}${i % 10}`, categoryId: BigInt(i) }))
  return pets
}

test('many distinct full pages of long multi-byte names are kept within REPLY_CACHE_MAX_BYTES, not only within REPLY_CACHE_ENTRIES', async (t) => {
  const { reads, faults } = storeReads()
  const MAX_BYTES = 200_000
  const api = await buildTestApp(t, { faults, env: { REPLY_CACHE_MAX_BYTES: String(MAX_BYTES) } })
  const pets = await seedLongNames(api.store, 45)
  // 30 distinct full pages of 10 pets, one from each cursor, then read again newest first: the
  // hits are the pages still kept.
  const urls = pets.slice(0, 30).map((pet) => `/v1/pets?limit=10&cursor=${encodeCursor(pet.id)}`)
  const sizes = []
  for (const url of urls) {
    const page = await get(api, url)
    assert.ok(page.link !== undefined, 'a full page')
    sizes.push(page.body.length * 2)
  }
  assert.equal(reads.listPets, urls.length)
  let kept = 0
  for (const url of urls.toReversed()) {
    const before = reads.listPets
    await get(api, url)
    if (reads.listPets === before) kept++
  }
  // The two caches share the bound: full pages get half of it. What V8 needs for the kept
  // strings alone is within it; a page more would not be.
  const keptBytes = sizes.slice(-kept).reduce((sum, size) => sum + size, 0)
  t.diagnostic(`${kept} of ${urls.length} pages of ${sizes[0]} bytes kept: ${keptBytes} bytes of ${MAX_BYTES / 2}`)
  assert.ok(kept > 0 && kept < urls.length, `${kept} pages kept`)
  assert.ok(keptBytes <= MAX_BYTES / 2, `${keptBytes} bytes kept`)
  assert.ok(keptBytes + sizes[0]! * 2 > MAX_BYTES / 2, `${kept} pages kept: far fewer than the bound holds`)
})

test('a reply larger than the whole REPLY_CACHE_MAX_BYTES is not kept, and REPLY_CACHE_MAX_BYTES=0 keeps nothing', async (t) => {
  for (const maxBytes of ['4000', '0']) {
    const { reads, faults } = storeReads()
    const api = await buildTestApp(t, { faults, env: { REPLY_CACHE_MAX_BYTES: maxBytes } })
    const [pet] = await seedLongNames(api.store, 12)
    for (let i = 0; i < 2; i++) {
      assert.ok((await get(api, '/v1/pets?limit=10')).link !== undefined)
      assert.equal((await get(api, `/v1/pets/${pet!.id}`)).status, 200)
    }
    assert.deepEqual(reads, maxBytes === '0' ? { getPet: 2, listPets: 2 } : { getPet: 1, listPets: 2 }, `REPLY_CACHE_MAX_BYTES=${maxBytes}`)
  }
})

/** An app on a store that, like concurrent writers with a sequence, does not promise ids in commit order. */
async function appOnUnorderedStore (t: TestContext, reads: { getPet: number, listPets: number }) {
  const { store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const unordered = new Proxy(store, {
    get (target, property) {
      if (property === 'idsFollowCommitOrder') return false
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      // Counted when called, not when read: the app's store wrapper reads each method once.
      return (...args: unknown[]) => {
        if (property === 'getPet' || property === 'listPets') reads[property]++
        return value.apply(target, args)
      }
    }
  }) satisfies Store
  const app = await buildApp({ config: testConfig(), store: unordered })
  t.after(async () => { await app.close(); await cleanup() })
  return { store, inject: (options: InjectOptions) => injectChecked(app, options), auth: { authorization: `Bearer ${key}` } }
}

test('a store that does not assign ids in commit order gets no cache: every read goes to it', async (t) => {
  const reads = { getPet: 0, listPets: 0 }
  const api = await appOnUnorderedStore(t, reads)
  const [pet] = await seedPets(api.store, ['available', 'available', 'available'])
  for (let i = 0; i < 2; i++) {
    assert.equal((await get(api, `/v1/pets/${pet!.id}`)).status, 200)
    assert.equal((await get(api, '/v1/pets?limit=2')).status, 200)
  }
  assert.deepEqual(reads, { getPet: 2, listPets: 2 })
})

/** The refusal of a route that changes pets, as the app words it. */
const changesPets = (route: string, cached: string) => new Error(`${route} changes pets while the reply cache keeps replies of ${cached} as final (src/pets/reply-cache.ts), so instances would go on sending the pet as it was; make the cache forget a pet that changes, or start with REPLY_CACHE_ENTRIES=0`)

test('while the cache is on, the app refuses a route that changes pets, naming it: kept replies would go stale', async (t) => {
  const { app } = await buildTestApp(t)
  const handler = async () => ({})
  const cached = '/v1/pets and /v1/pets/:petId'
  assert.throws(() => app.patch('/v1/pets/:petId', handler), changesPets('PATCH /v1/pets/:petId', cached))
  assert.throws(() => app.route({ method: ['PUT', 'DELETE'], url: '/v1/pets', handler }), changesPets('PUT, DELETE /v1/pets', cached))
  assert.throws(() => app.post('/v1/pets/:petId/rename', { config: { changesPets: true } }, handler), changesPets('POST /v1/pets/:petId/rename', cached))
  assert.throws(() => app.post('/v1/admin/rename', { config: { changesPets: true } }, handler), changesPets('POST /v1/admin/rename', cached))
  // Adding to a pet's story changes no pet; neither does a route elsewhere.
  app.post('/v1/pets/:petId/views', handler)
  app.delete('/v1/sessions/:id', handler)
  await app.ready()
})

test('with the cache off, a route that changes pets is let in', async (t) => {
  const { app } = await buildTestApp(t, { env: { REPLY_CACHE_ENTRIES: '0' } })
  app.post('/v1/pets/:petId/rename', { config: { changesPets: true } }, async () => ({ renamed: true }))
  const res = await app.inject({ method: 'POST', url: '/v1/pets/1/rename' })
  assert.deepEqual([res.statusCode, res.json()], [200, { renamed: true }])
})

test('the cache gives a share only to a route marked cacheable, and refuses a route that changes pets in either order', async (t) => {
  const { store, cleanup } = await createTestStore()
  const app = Fastify()
  t.after(async () => { await app.close(); await cleanup() })
  app.decorate('store', store)
  app.decorate('config', testConfig({ REPLY_CACHE_ENTRIES: '10', REPLY_CACHE_MAX_BYTES: String(1 << 20) }))
  app.decorate('metrics', createMetrics(store.kind))
  await app.register(replyCache)
  const json = (value: string) => value
  assert.deepEqual([{ cacheable: true }, { cacheable: false }, {}].map((config) => app.replyCache.keep(config, 'pet', json) !== undefined), [true, false, false])
  const handler = async () => ({})
  app.delete('/pets/:petId', handler)
  assert.throws(() => app.get('/pets', { config: { cacheable: true } }, handler), changesPets('DELETE /pets/:petId', '/pets'))
})
