import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { Redis } from 'ioredis'
import { twoInstances } from '../helpers/two-instances.ts'

/*
 * Redis is shared with other work on this machine: this test's counters live under a prefix
 * of its own, removed at the end.
 */

const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

test('with Redis, every instance counts against the same limits, under REDIS_KEY_PREFIX', async (t) => {
  const prefix = `petstore-test-${randomUUID()}:`
  const clients: Redis[] = []
  const client = async () => {
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 })
    clients.push(redis)
    await redis.connect()
    return redis
  }
  const inspector = await client()
  t.after(async () => {
    const keys = await inspector.keys(`${prefix}*`)
    if (keys.length > 0) await inspector.del(...keys)
    for (const redis of clients) redis.disconnect()
  })

  const { list } = await twoInstances(t, { RATE_LIMIT_PER_MINUTE: '4', FAILED_AUTH_LIMIT_PER_MINUTE: '2', REDIS_KEY_PREFIX: prefix }, client)
  const statuses = [await list(0), await list(1), await list(0), await list(1), await list(0), await list(1)].map((r) => r.statusCode)
  assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429])
  const guesses = [await list(0, 'Bearer psk_x', '10.9.9.9'), await list(1, 'Bearer psk_y', '10.9.9.9'), await list(0, 'Bearer psk_z', '10.9.9.9')]
  assert.deepEqual(guesses.map((r) => r.statusCode), [401, 401, 429])
  assert.deepEqual((await inspector.keys(`${prefix}*`)).map((key) => key.slice(prefix.length)).sort(),
    ['rate-limit:failed-auth:10.9.9.9', 'rate-limit:key:1'])
})
