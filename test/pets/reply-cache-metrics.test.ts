import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nextPath, seedPets } from '../helpers/api-steps.ts'
import { buildTestApp, type TestApp } from '../helpers/app.ts'
import { scrape } from '../helpers/scrape.ts'

/**
 * petstore_reply_cache_hits_total and _misses_total, by cache: `pet` for found pets (getPet),
 * `list` for full pages (listPets). A lookup that finds nothing is a miss, whether or not its
 * reply is then kept; with no cache no lookup is made and both stay 0.
 */

/** The reply cache's sample lines of /metrics, in the order of the exposition. */
async function cacheLines (api: Pick<TestApp, 'app'>): Promise<string[]> {
  const text = await scrape(api.app)
  return text.split('\n').filter((line) => line.startsWith('petstore_reply_cache_'))
}

async function status (api: Pick<TestApp, 'inject' | 'auth'>, url: string) {
  const res = await api.inject({ url, headers: api.auth })
  return { status: res.statusCode, link: res.headers.link }
}

test('a first get of a pet is a miss and a second a hit; a 404 is a miss every time', async (t) => {
  const api = await buildTestApp(t)
  const [pet] = await seedPets(api.store, ['available'])
  assert.deepEqual(await cacheLines(api), [
    'petstore_reply_cache_hits_total{cache="pet"} 0',
    'petstore_reply_cache_hits_total{cache="list"} 0',
    'petstore_reply_cache_misses_total{cache="pet"} 0',
    'petstore_reply_cache_misses_total{cache="list"} 0'
  ])
  assert.equal((await status(api, `/v1/pets/${pet!.id}`)).status, 200)
  assert.equal((await status(api, `/v1/pets/${pet!.id}`)).status, 200)
  assert.equal((await status(api, '/v1/pets/424242')).status, 404)
  assert.equal((await status(api, '/v1/pets/424242')).status, 404)
  assert.deepEqual(await cacheLines(api), [
    'petstore_reply_cache_hits_total{cache="pet"} 1',
    'petstore_reply_cache_hits_total{cache="list"} 0',
    'petstore_reply_cache_misses_total{cache="pet"} 3',
    'petstore_reply_cache_misses_total{cache="list"} 0'
  ])
})

test('a first read of a full page is a miss and a second a hit; the last page, never kept, is a miss every time', async (t) => {
  const api = await buildTestApp(t)
  await seedPets(api.store, ['available', 'available', 'available'])
  const full = await status(api, '/v1/pets?limit=2')
  assert.deepEqual(await status(api, '/v1/pets?limit=2'), full)
  const last = nextPath(full.link)!
  assert.equal((await status(api, last)).status, 200)
  assert.equal((await status(api, last)).status, 200)
  assert.deepEqual(await cacheLines(api), [
    'petstore_reply_cache_hits_total{cache="pet"} 0',
    'petstore_reply_cache_hits_total{cache="list"} 1',
    'petstore_reply_cache_misses_total{cache="pet"} 0',
    'petstore_reply_cache_misses_total{cache="list"} 3'
  ])
})

test('REPLY_CACHE_ENTRIES=0 makes no lookup: hits and misses stay 0', async (t) => {
  const api = await buildTestApp(t, { env: { REPLY_CACHE_ENTRIES: '0' } })
  const [pet] = await seedPets(api.store, ['available', 'available', 'available'])
  for (let i = 0; i < 2; i++) {
    assert.equal((await status(api, `/v1/pets/${pet!.id}`)).status, 200)
    assert.equal((await status(api, '/v1/pets?limit=2')).status, 200)
  }
  assert.deepEqual(await cacheLines(api), [
    'petstore_reply_cache_hits_total{cache="pet"} 0',
    'petstore_reply_cache_hits_total{cache="list"} 0',
    'petstore_reply_cache_misses_total{cache="pet"} 0',
    'petstore_reply_cache_misses_total{cache="list"} 0'
  ])
})

test('each app counts only its own cache lookups', async (t) => {
  const first = await buildTestApp(t)
  const second = await buildTestApp(t)
  const [pet] = await seedPets(first.store, ['available'])
  assert.equal((await status(first, `/v1/pets/${pet!.id}`)).status, 200)
  assert.deepEqual(await cacheLines(first), [
    'petstore_reply_cache_hits_total{cache="pet"} 0',
    'petstore_reply_cache_hits_total{cache="list"} 0',
    'petstore_reply_cache_misses_total{cache="pet"} 1',
    'petstore_reply_cache_misses_total{cache="list"} 0'
  ])
  assert.deepEqual(await cacheLines(second), [
    'petstore_reply_cache_hits_total{cache="pet"} 0',
    'petstore_reply_cache_hits_total{cache="list"} 0',
    'petstore_reply_cache_misses_total{cache="pet"} 0',
    'petstore_reply_cache_misses_total{cache="list"} 0'
  ])
})
