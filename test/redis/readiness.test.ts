import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../src/app.ts'
import { connectRedis } from '../../src/auth/redis.ts'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
import { createTestStore, testConfig } from '../helpers/app.ts'
import { startTcpProxy } from '../helpers/tcp-proxy.ts'

/*
 * Redis is shared with other work on this machine, so the app reaches it through a TCP proxy
 * in this test that can reset or swallow its connections, and never stops Redis itself.
 */

const TEST_REDIS_URL = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379')
const TIMEOUT_MS = 300
const BREAKER_MS = 500

test('/readyz stays 200 while Redis is silent or refuses; ?verbose says Redis is down, and up again once it is back', { timeout: 60_000 }, async (t) => {
  const proxy = await startTcpProxy({ host: TEST_REDIS_URL.hostname, port: Number(TEST_REDIS_URL.port || 6379) })
  t.after(() => proxy.close())
  const via = new URL(TEST_REDIS_URL)
  via.hostname = proxy.host
  via.port = String(proxy.port)
  const redis = await connectRedis(via.toString(), TIMEOUT_MS)
  const { store, cleanup } = await createTestStore()
  const app = await buildApp({ config: testConfig({ REDIS_TIMEOUT_MS: String(TIMEOUT_MS), REDIS_BREAKER_MS: String(BREAKER_MS) }), store, redis })
  t.after(async () => { await app.close(); await cleanup() })
  const ready = (url: string) => app.inject({ url }).then((res) => ({ status: res.statusCode, body: JSON.parse(res.body) as unknown }))
  const verbose = (redisState: string) => ({ status: 200, body: { status: 'ready', checks: { store: 'up', redis: redisState } } })
  const plain = { status: 200, body: { status: 'ready' } }

  assert.deepEqual([await ready('/readyz'), await ready('/readyz?verbose')], [plain, verbose('up')])

  proxy.setMode('blackhole')
  // ?verbose answers from a check of Redis at most READINESS_FRESH_MS old.
  await sleep(READINESS_FRESH_MS)
  const started = performance.now()
  assert.deepEqual([await ready('/readyz'), await ready('/readyz?verbose')], [plain, verbose('down')])
  assert.ok(performance.now() - started < TIMEOUT_MS + 2000)

  proxy.setMode('refuse')
  assert.deepEqual([await ready('/readyz'), await ready('/readyz?verbose')], [plain, verbose('down')])

  proxy.setMode('forward')
  const deadline = Date.now() + 10_000
  let response = await ready('/readyz?verbose')
  while (JSON.stringify(response) !== JSON.stringify(verbose('up')) && Date.now() < deadline) {
    await sleep(100)
    response = await ready('/readyz?verbose')
  }
  assert.deepEqual([await ready('/readyz'), response], [plain, verbose('up')])
})
