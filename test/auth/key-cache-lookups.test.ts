import assert from 'node:assert/strict'
import { test } from 'node:test'
import { hashApiKey } from '../../src/auth/api-key.ts'
import { KEY_CACHE_ENTRIES, keyCache } from '../../src/auth/key-cache.ts'
import type { ApiKeyRecord, Store } from '../../src/store/types.ts'

/**
 * When the key cache asks the store: once per key for all the requests that wait, ahead of
 * expiry in the background under a time bound, and never trusting an entry past the bound.
 * cached() is what a request gets at once; undefined sends it to lookUp(), where it waits.
 */

/** A key as a request sends it: the cache is asked by the key, and asks the store by its hash. */
const KEY = 'psk_' + 'a'.repeat(43)
const record = (revokedAt: string | null = null): ApiKeyRecord =>
  ({ id: 7, name: 'ci', prefix: 'psk_abcdefgh', scope: 'write', createdAt: '2026-11-01T00:00:00.000Z', lastUsedAt: null, revokedAt, expiresAt: null, lineageId: 7, rotatedFrom: null })

/** A store whose key lookups return only when the test says so. */
function controlledStore (keyVersion?: () => number) {
  const lookups: Array<{ resolve: (key: ApiKeyRecord | undefined) => void, reject: (error: Error) => void }> = []
  const store = {
    findApiKeyByHash: () => new Promise<ApiKeyRecord | undefined>((resolve, reject) => { lookups.push({ resolve, reject }) }),
    keyVersion
  } as unknown as Store
  return { store, lookups }
}

/** A cache with a 1000 ms bound whose entry for KEY was looked up at 0. */
async function cachedAtZero () {
  const { store, lookups } = controlledStore()
  const cache = keyCache(store, 1000)
  const first = cache.lookUp(KEY, 0)
  lookups[0]!.resolve(record())
  await first
  return { cache, lookups }
}

const settled = () => new Promise((resolve) => setImmediate(resolve))
const revoked = record('2026-11-25T00:00:00.000Z')

test('requests that wait for the same key share one lookup', async () => {
  const { store, lookups } = controlledStore()
  const cache = keyCache(store, 1000)
  assert.equal(cache.cached(KEY, 0), undefined)
  const waiting = [cache.lookUp(KEY, 0), cache.lookUp(KEY, 5), cache.lookUp(KEY, 10)]
  assert.equal(lookups.length, 1)
  lookups[0]!.resolve(record())
  assert.deepEqual(await Promise.all(waiting), [record(), record(), record()])
  assert.deepEqual(cache.cached(KEY, 20), record(), 'then served from the entry')
  assert.equal(lookups.length, 1)
})

test('past half its life an entry is looked up again in the background, and what that finds is used', async () => {
  const { cache, lookups } = await cachedAtZero()
  assert.deepEqual(cache.cached(KEY, 499), record())
  assert.equal(lookups.length, 1, 'younger than half the bound: no lookup')
  assert.deepEqual(cache.cached(KEY, 500), record(), 'served at once, not after the lookup')
  assert.deepEqual(cache.cached(KEY, 600), record())
  assert.equal(lookups.length, 2, 'one refresh, shared')
  lookups[1]!.resolve(revoked)
  await settled()
  assert.deepEqual(cache.cached(KEY, 700), revoked, 'the refresh replaced the entry')
  assert.deepEqual(cache.cached(KEY, 1400), revoked, 'and its age counts from when the refresh was sent (500)')
  assert.equal(cache.cached(KEY, 1500), undefined, 'up to the bound from then, and not past it')
})

test('an entry is never trusted past the bound, even while its refresh is still out', async () => {
  const { cache, lookups } = await cachedAtZero()
  assert.deepEqual(cache.cached(KEY, 600), record())
  assert.equal(lookups.length, 2)
  assert.equal(cache.cached(KEY, 1000), undefined, 'at the bound the request waits')
  const late = cache.lookUp(KEY, 1000)
  assert.equal(lookups.length, 2, 'for the refresh already out, which was sent within the bound')
  lookups[1]!.resolve(undefined)
  assert.equal(await late, undefined, 'a key gone from the store is gone for the request')
  assert.equal(cache.cached(KEY, 1001), undefined)
  const again = cache.lookUp(KEY, 1001)
  assert.equal(lookups.length, 3)
  lookups[2]!.resolve(record())
  assert.deepEqual(await again, record())
})

test('what a lookup sent longer than the bound before a request finds is not used for it, and a failed refresh changes nothing', async () => {
  const { store, lookups } = controlledStore()
  const cache = keyCache(store, 1000)
  const slow = cache.lookUp(KEY, 0)
  const late = cache.lookUp(KEY, 1000)
  assert.equal(lookups.length, 1, 'the later request waits for the lookup out')
  lookups[0]!.resolve(record())
  assert.deepEqual(await slow, record())
  await settled()
  assert.equal(lookups.length, 2, 'what the first lookup found may be older than the bound allows at 1000: the request asks again')
  lookups[1]!.resolve(revoked)
  assert.deepEqual(await late, revoked)
  assert.deepEqual(cache.cached(KEY, 1500), revoked, 'and what that found is the entry')

  const { cache: cached, lookups: failing } = await cachedAtZero()
  assert.deepEqual(cached.cached(KEY, 700), record())
  failing[1]!.reject(new Error('store down'))
  await settled()
  assert.deepEqual(cached.cached(KEY, 999), record(), 'the entry stands until its bound')
  assert.equal(failing.length, 3, 'and is refreshed again')
  assert.equal(cached.cached(KEY, 1000), undefined, 'and then the request waits for the store')
  assert.equal(cached.cached(KEY, -1), undefined, 'as it does when the clock went back')
  const back = cached.lookUp(KEY, -1)
  failing[2]!.resolve(record())
  await settled()
  assert.equal(failing.length, 4, 'the refresh out was sent at 999, after -1 by the clock: not trusted, the request asks again')
  failing[3]!.resolve(revoked)
  assert.deepEqual(await back, revoked)
})

test('a request waiting for a lookup that fails gets the store\'s error, and the next one asks again', async () => {
  const { store, lookups } = controlledStore()
  const cache = keyCache(store, 1000)
  const waiting = [cache.lookUp(KEY, 0), cache.lookUp(KEY, 1)]
  lookups[0]!.reject(new Error('store down'))
  assert.deepEqual(await Promise.allSettled(waiting), [
    { status: 'rejected', reason: new Error('store down') },
    { status: 'rejected', reason: new Error('store down') }
  ])
  assert.equal(cache.cached(KEY, 2), undefined)
  const again = cache.lookUp(KEY, 2)
  assert.equal(lookups.length, 2)
  lookups[1]!.resolve(record())
  assert.deepEqual(await again, record())
})

test('keys the store does not know are not kept: guesses do not push known keys out', async () => {
  const store = { findApiKeyByHash: async (hash: string) => hash === hashApiKey(KEY) ? record() : undefined } as unknown as Store
  const cache = keyCache(store, 1000)
  assert.deepEqual(await cache.lookUp(KEY, 0), record())
  for (let i = 0; i < KEY_CACHE_ENTRIES; i++) assert.equal(await cache.lookUp('psk_' + i.toString(16).padStart(43, '0'), 1), undefined)
  assert.deepEqual(cache.cached(KEY, 2), record())
})

test('KEY_CACHE_TTL_MS=0 reads the key for every request, sharing nothing', async () => {
  const { store, lookups } = controlledStore()
  const cache = keyCache(store, 0)
  const first = cache.lookUp(KEY, 0)
  const second = cache.lookUp(KEY, 0)
  assert.equal(lookups.length, 2)
  lookups[0]!.resolve(record())
  lookups[1]!.resolve(record())
  assert.deepEqual(await Promise.all([first, second]), [record(), record()])
  assert.equal(cache.cached(KEY, 0), undefined, 'not even a result of this very millisecond is kept')
  const third = cache.lookUp(KEY, 0)
  assert.equal(lookups.length, 3)
  lookups[2]!.resolve(record())
  await third
})

test('with a key version (SQLite), a lookup is shared within a version and not across a change', async () => {
  let version = 1
  const { store, lookups } = controlledStore(() => version)
  const cache = keyCache(store, 1000)
  assert.equal(cache.cached(KEY, 0), undefined)
  const a = cache.lookUp(KEY, 0)
  const b = cache.lookUp(KEY, 1)
  assert.equal(lookups.length, 1)
  version = 2
  assert.equal(cache.cached(KEY, 2), undefined)
  const c = cache.lookUp(KEY, 2)
  assert.equal(lookups.length, 2, 'a key change since the first lookup was sent: it may not have seen it')
  lookups[1]!.resolve(revoked)
  lookups[0]!.resolve(record())
  assert.deepEqual(await Promise.all([a, b, c]), [record(), record(), revoked])
  assert.deepEqual(cache.cached(KEY, 3), revoked, 'the older lookup, finishing last, did not replace the newer entry')
  assert.deepEqual(cache.cached(KEY, 100_000), revoked, 'exact: no time bound while the version stands')
  assert.equal(lookups.length, 2)
})

test('with a key version, an entry carries the version its lookup was sent under, not the one it came back under', async () => {
  let version = 1
  const { store, lookups } = controlledStore(() => version)
  const cache = keyCache(store, 1000)
  const sent = cache.lookUp(KEY, 0)
  version = 2
  lookups[0]!.resolve(record())
  assert.deepEqual(await sent, record())
  assert.equal(cache.cached(KEY, 5), undefined, 'the key may have changed after the lookup read it')
  const again = cache.lookUp(KEY, 5)
  assert.equal(lookups.length, 2)
  lookups[1]!.resolve(revoked)
  assert.deepEqual(await again, revoked)
})
