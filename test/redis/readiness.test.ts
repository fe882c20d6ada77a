import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../src/app.ts'
import { connectRedis } from '../../src/auth/redis.ts'
import { createTestStore, testConfig } from '../helpers.ts'
import { startTcpProxy } from '../tcp-proxy.ts'

/*
 * Redis is shared with other work on this machine, so the app reaches it through a TCP proxy
 * in this test that can reset or swallow its connections, and never stops Redis itself.
 */

const TEST_REDIS_URL = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379')
const TIMEOUT_MS = 300

test('/readyz includes Redis when REDIS_URL is set: 503 while it is away, ready again once it is back', { timeout: 60_000 }, async (t) => {
  const proxy = await startTcpProxy({ host: TEST_REDIS_URL.hostname, port: Number(TEST_REDIS_URL.port || 6379) })
  t.after(() => proxy.close())
  const via = new URL(TEST_REDIS_URL)
  via.hostname = proxy.host
  via.port = String(proxy.port)
  const redis = await connectRedis(via.toString(), TIMEOUT_MS)
  const { store, cleanup } = await createTestStore()
  const app = await buildApp({ config: testConfig(), store, redis })
  t.after(async () => { await app.close(); await cleanup() })
  const ready = (requestId: string) => app.inject({ url: '/readyz', headers: { 'x-request-id': requestId } })
    .then((res) => ({ status: res.statusCode, body: JSON.parse(res.body) as unknown }))
  const redisAway = (requestId: string) => ({ status: 503, body: { code: 'unavailable', message: `Redis is not reachable (request id ${requestId})`, status: 503 } })

  assert.deepEqual(await ready('up'), { status: 200, body: { status: 'ready' } })

  proxy.setMode('blackhole')
  const started = performance.now()
  assert.deepEqual(await ready('silent'), redisAway('silent'))
  assert.ok(performance.now() - started < TIMEOUT_MS + 2000)

  proxy.setMode('refuse')
  assert.deepEqual(await ready('refused'), redisAway('refused'))

  proxy.setMode('forward')
  const deadline = Date.now() + 10_000
  let answer = await ready('back')
  while (answer.status !== 200 && Date.now() < deadline) {
    await sleep(100)
    answer = await ready('back')
  }
  assert.deepEqual(answer, { status: 200, body: { status: 'ready' } })
})
