import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KeyCache } from '../src/auth/key-cache.ts'
import type { ApiKeyRecord, Store } from '../src/store/types.ts'

/**
 * When the key cache asks the store: once per key for all the requests that wait, ahead of
 * expiry in the background under a time bound, and never trusting an entry past the bound.
 */

const HASH = 'a'.repeat(64)
const record = (revokedAt: string | null = null): ApiKeyRecord =>
  ({ id: 7, name: 'ci', prefix: 'psk_abcdefgh', createdAt: '2026-11-01T00:00:00.000Z', lastUsedAt: null, revokedAt, expiresAt: null })

/** A store whose key lookups answer only when the test says so. */
function controlledStore (keyVersion?: () => number) {
  const lookups: Array<{ resolve: (key: ApiKeyRecord | undefined) => void, reject: (error: Error) => void }> = []
  const store = {
    findApiKeyByHash: () => new Promise<ApiKeyRecord | undefined>((resolve, reject) => { lookups.push({ resolve, reject }) }),
    keyVersion
  } as unknown as Store
  return { store, lookups }
}

/** A cache with a 1000 ms bound whose entry for HASH was looked up at 0. */
async function cachedAtZero () {
  const { store, lookups } = controlledStore()
  const cache = new KeyCache(store, 1000)
  const first = cache.find(HASH, 0)
  lookups[0]!.resolve(record())
  await first
  return { cache, lookups }
}

test('requests that wait for the same key share one lookup', async () => {
  const { store, lookups } = controlledStore()
  const cache = new KeyCache(store, 1000)
  const waiting = [cache.find(HASH, 0), cache.find(HASH, 5), cache.find(HASH, 10)]
  assert.ok(waiting.every((found) => found instanceof Promise))
  assert.equal(lookups.length, 1)
  lookups[0]!.resolve(record())
  assert.deepEqual(await Promise.all(waiting), [record(), record(), record()])
  assert.deepEqual(cache.find(HASH, 20), record(), 'then answered from the entry')
  assert.equal(lookups.length, 1)
})

test('past half its life an entry is looked up again in the background, and what that finds is used', async () => {
  const { cache, lookups } = await cachedAtZero()
  assert.deepEqual(cache.find(HASH, 499), record())
  assert.equal(lookups.length, 1, 'younger than half the bound: no lookup')
  assert.deepEqual(cache.find(HASH, 500), record(), 'answered at once, not after the lookup')
  assert.deepEqual(cache.find(HASH, 600), record())
  assert.equal(lookups.length, 2, 'one refresh, shared')
  const revoked = record('2026-11-25T00:00:00.000Z')
  lookups[1]!.resolve(revoked)
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(cache.find(HASH, 700), revoked, 'the refresh replaced the entry')
  assert.deepEqual(cache.find(HASH, 1400), revoked, 'and its age counts from when the refresh was sent (500)')
  assert.ok(cache.find(HASH, 1500) instanceof Promise, 'up to the bound from then, and not past it')
})

test('an entry is never trusted past the bound, even while its refresh is still out', async () => {
  const { cache, lookups } = await cachedAtZero()
  assert.deepEqual(cache.find(HASH, 600), record())
  assert.equal(lookups.length, 2)
  const late = cache.find(HASH, 1000)
  assert.ok(late instanceof Promise, 'at the bound the request waits')
  assert.equal(lookups.length, 2, 'for the refresh already out, which was sent within the bound')
  lookups[1]!.resolve(undefined)
  assert.equal(await late, undefined, 'a key gone from the store is gone from the cache')
  const again = cache.find(HASH, 1001)
  assert.ok(again instanceof Promise)
  assert.equal(lookups.length, 3)
  lookups[2]!.resolve(record())
  assert.deepEqual(await again, record())
})

test('a lookup out for longer than the bound is not shared, and a failed refresh changes nothing', async () => {
  const { store, lookups } = controlledStore()
  const cache = new KeyCache(store, 1000)
  const slow = cache.find(HASH, 0)
  const fresh = cache.find(HASH, 1000)
  assert.equal(lookups.length, 2, 'what the first lookup finds may be older than the bound allows at 1000')
  lookups[1]!.resolve(record())
  assert.deepEqual(await fresh, record())
  lookups[0]!.resolve(record())
  await slow
  assert.deepEqual(cache.find(HASH, 1500), record(), 'the older lookup, answering last, did not replace the newer entry')
  const { cache: cached, lookups: failingLookups } = await cachedAtZero()
  assert.deepEqual(cached.find(HASH, 700), record())
  failingLookups[1]!.reject(new Error('store down'))
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(cached.find(HASH, 999), record(), 'the entry stands until its bound')
  assert.ok(cached.find(HASH, 1000) instanceof Promise, 'and then the request waits for the store')
  assert.ok(cached.find(HASH, -1) instanceof Promise, 'as it does when the clock went back')
})

test('KEY_CACHE_TTL_MS=0 reads the key for every request, sharing nothing', async () => {
  const { store, lookups } = controlledStore()
  const cache = new KeyCache(store, 0)
  const first = cache.find(HASH, 0)
  const second = cache.find(HASH, 0)
  assert.ok(first instanceof Promise && second instanceof Promise)
  assert.equal(lookups.length, 2)
  lookups[0]!.resolve(record())
  lookups[1]!.resolve(record())
  await Promise.all([first, second])
  assert.ok(cache.find(HASH, 0) instanceof Promise, 'not even an answer of this very millisecond is kept')
  assert.equal(lookups.length, 3)
})

test('with a key version (SQLite), a lookup is shared within a version and not across a change', async () => {
  let version = 1
  const { store, lookups } = controlledStore(() => version)
  const cache = new KeyCache(store, 1000)
  const a = cache.find(HASH, 0)
  const b = cache.find(HASH, 1)
  assert.equal(lookups.length, 1)
  version = 2
  const c = cache.find(HASH, 2)
  assert.equal(lookups.length, 2, 'a key change since the first lookup was sent: it may not have seen it')
  const revoked = record('2026-11-25T00:00:00.000Z')
  lookups[0]!.resolve(record())
  lookups[1]!.resolve(revoked)
  assert.deepEqual(await Promise.all([a, b, c]), [record(), record(), revoked])
  assert.deepEqual(cache.find(HASH, 3), revoked)
  assert.deepEqual(cache.find(HASH, 100_000), revoked, 'exact: no time bound while the version stands')
})

test('with a key version, an entry carries the version its lookup was sent under, not the one it came back under', async () => {
  let version = 1
  const { store, lookups } = controlledStore(() => version)
  const cache = new KeyCache(store, 1000)
  const sent = cache.find(HASH, 0)
  version = 2
  lookups[0]!.resolve(record())
  assert.deepEqual(await sent, record())
  assert.ok(cache.find(HASH, 5) instanceof Promise, 'the key may have changed after the lookup read it')
  assert.equal(lookups.length, 2)
})
