import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { Redis } from 'ioredis'
import { limitStore } from '../../src/auth/rate-limits.ts'

/*
 * The Redis twin of test/auth/rate-limit-stores.test.ts: what src/auth/rate-limits.ts relies on in
 * the Redis store it takes from @fastify/rate-limit by path. Its counters live under a prefix of
 * its own, removed at the end (the Redis is shared with other work on this machine).
 */

const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

test('the Redis store counts under REDIS_KEY_PREFIX + "rate-limit:" + the limit, in a window that starts with the first request; read only reads', async (t) => {
  const prefix = `petstore-test-${randomUUID()}:`
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  await redis.connect()
  t.after(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    redis.disconnect()
  })
  const store = limitStore('failed-auth', { redis, redisKeyPrefix: prefix })
  const call = (method: 'incr' | 'read', key: string) => new Promise<{ current: number, ttl: number }>((resolve, reject) => {
    store[method](key, (error, count) => { if (error || !count) reject(error); else resolve({ current: count.current, ttl: count.ttl }) }, 60_000, 2)
  })
  const counts = [await call('incr', '10.0.0.1'), await call('read', '10.0.0.1')]
  for (let i = 0; i < 3; i++) counts.push(await call('incr', '10.0.0.1'))
  counts.push(await call('read', '10.0.0.2'))
  // The window's end counts down in Redis: the ttl is compared as "within the minute".
  assert.deepEqual(counts.map(({ current, ttl }) => ({ current, ttl: ttl > 0 && ttl <= 60_000 ? 'within the minute' : ttl })), [
    { current: 1, ttl: 'within the minute' },
    { current: 1, ttl: 'within the minute' },
    { current: 2, ttl: 'within the minute' },
    { current: 3, ttl: 'within the minute' },
    { current: 4, ttl: 'within the minute' },
    { current: 0, ttl: 0 }
  ])
  assert.equal(counts[0]!.ttl, 60_000, 'the first request starts a whole window')
  assert.deepEqual(await redis.keys(`${prefix}*`), [`${prefix}rate-limit:failed-auth:10.0.0.1`])
})
