import assert from 'node:assert/strict'
import { test } from 'node:test'
import { limitStore } from '../../src/auth/rate-limits.ts'

/*
 * src/auth/rate-limits.ts takes @fastify/rate-limit's two counter stores by path: the package
 * has no exports map and does not type them (src/auth/rate-limit-stores.d.ts does). These tests
 * hold what it relies on, so that an upgrade that changes it fails here, by name. The Redis
 * store's twin is test/redis/rate-limit-stores.test.ts.
 */

type Store = ReturnType<typeof limitStore>
const WINDOW_MS = 60_000
const QUOTA = 2

/** The count as the store gives it to its callback, copied: the in-memory store hands out the entry it keeps changing. */
const call = (store: Store, method: 'incr' | 'read', key: string) => new Promise((resolve, reject) => {
  store[method](key, (error, count) => { if (error || !count) reject(error); else resolve({ current: count.current, ttl: count.ttl }) }, WINDOW_MS, QUOTA)
})

test('the in-memory store counts in a fixed window from the first request, and read only reads', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 })
  const store = limitStore('key', { redisKeyPrefix: 'unused:' })
  const counts = [await call(store, 'incr', 'k'), await call(store, 'read', 'k')]
  t.mock.timers.tick(1_000)
  for (let i = 0; i < 3; i++) counts.push(await call(store, 'incr', 'k'))
  counts.push(await call(store, 'read', 'k'), await call(store, 'read', 'other'))
  t.mock.timers.tick(59_000)
  counts.push(await call(store, 'read', 'k'), await call(store, 'incr', 'k'))
  assert.deepEqual(counts, [
    { current: 1, ttl: 60_000 },
    { current: 1, ttl: 60_000 },
    // Past the quota the window keeps its end: no continueExceeding, no backoff.
    { current: 2, ttl: 59_000 },
    { current: 3, ttl: 59_000 },
    { current: 4, ttl: 59_000 },
    { current: 4, ttl: 59_000 },
    { current: 0, ttl: 0 },
    { current: 0, ttl: 0 },
    { current: 1, ttl: 60_000 }
  ])
})
