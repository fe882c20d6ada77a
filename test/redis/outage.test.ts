import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { connectRedis } from '../../src/auth/redis.ts'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
import { captureLog } from '../helpers/log-capture.ts'
import { createTestStore, issueKey, testConfig } from '../helpers/app.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { scrape } from '../helpers/scrape.ts'

/*
 * Redis is hung with SIGSTOP: it keeps its connections open and responds to nothing, so only
 * timeouts can tell. The redis-server is this test's own, on a port of its own.
 */

const TIMEOUT_MS = 500
const BREAKER_MS = 1000
const OPENED = 'Redis is not responding: rate limits are not counted until it responds again'
const CLOSED = 'Redis responds again: rate limits are counted again'

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!

function sample (text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

test('a hung Redis costs one timeout, then requests are served uncounted at normal speed; /readyz stays 200; one warning; counting resumes once Redis responds', { timeout: 60_000 }, async (t) => {
  const server = await startRedisServer(t)
  if (!server) return
  const redis = await connectRedis(server.url, TIMEOUT_MS)
  const { store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const log = captureLog()
  const app = await buildApp({
    config: testConfig({ LOG_LEVEL: 'info', REDIS_TIMEOUT_MS: String(TIMEOUT_MS), REDIS_BREAKER_MS: String(BREAKER_MS), REDIS_KEY_PREFIX: 'outage-test:' }),
    store,
    redis,
    logStream: log.stream
  })
  t.after(async () => { await app.close(); await cleanup() })

  const timed = async (headers: Record<string, string>) => {
    const started = performance.now()
    const res = await app.inject({ url: '/v1/pets', headers })
    return { ms: performance.now() - started, res }
  }
  const response = (res: LightMyRequestResponse) => ({ status: res.statusCode, counted: res.headers.ratelimit !== undefined })
  const withKey = { authorization: `Bearer ${key}` }
  const readyz = async (url: string) => { const res = await app.inject({ url }); return { status: res.statusCode, body: JSON.parse(res.body) as unknown } }
  const metrics = async () => {
    const text = await scrape(app)
    return { up: sample(text, 'petstore_redis_up'), opened: sample(text, 'petstore_redis_breaker_opened_total') }
  }

  const before: number[] = []
  for (let i = 0; i < 30; i++) {
    const { ms, res } = await timed(withKey)
    assert.deepEqual(response(res), { status: 200, counted: true })
    before.push(ms)
  }
  assert.deepEqual(await readyz('/readyz?verbose'), { status: 200, body: { status: 'ready', checks: { store: 'up', redis: 'up' } } })
  assert.deepEqual(await metrics(), { up: 1, opened: 0 })

  assert.ok(server.child.kill('SIGSTOP'))
  // The first request waits for one command's timeout, not one per counter.
  const first = await timed(withKey)
  assert.deepEqual(response(first.res), { status: 200, counted: false })
  assert.ok(first.ms >= TIMEOUT_MS * 0.9 && first.ms < TIMEOUT_MS * 1.5, `first request after the stop took ${first.ms} ms`)

  // Through several breaker periods, so that the probes of a still hung Redis are passed too.
  const after: number[] = []
  const until = performance.now() + 2.5 * BREAKER_MS
  while (performance.now() < until) {
    const ok = await timed(withKey)
    const refused = await timed({})
    assert.deepEqual([response(ok.res), response(refused.res)], [{ status: 200, counted: false }, { status: 401, counted: false }])
    after.push(ok.ms, refused.ms)
    await sleep(5)
  }
  assert.ok(Math.max(...after) < TIMEOUT_MS / 2, `slowest request while Redis is hung: ${Math.max(...after)} ms`)
  assert.ok(median(after) < 3 * median(before), `median ${median(after)} ms while hung, ${median(before)} ms before`)

  assert.deepEqual(await readyz('/readyz'), { status: 200, body: { status: 'ready' } })
  assert.deepEqual(await readyz('/readyz?verbose'), { status: 200, body: { status: 'ready', checks: { store: 'up', redis: 'down' } } })
  assert.deepEqual(await metrics(), { up: 0, opened: 1 })

  assert.ok(server.child.kill('SIGCONT'))
  const deadline = Date.now() + 3 * BREAKER_MS + 5000
  let resumed = response((await timed(withKey)).res)
  while (!resumed.counted && Date.now() < deadline) {
    await sleep(50)
    resumed = response((await timed(withKey)).res)
  }
  assert.deepEqual(resumed, { status: 200, counted: true })
  // ?verbose answers from a check of Redis at most READINESS_FRESH_MS old.
  await sleep(READINESS_FRESH_MS)
  assert.deepEqual(await readyz('/readyz?verbose'), { status: 200, body: { status: 'ready', checks: { store: 'up', redis: 'up' } } })
  assert.deepEqual(await metrics(), { up: 1, opened: 1 })

  const warnings = log.entries().filter((entry) => Number(entry.level) >= 40).map((entry) => entry.msg)
  assert.deepEqual(warnings, [OPENED])
  assert.deepEqual(log.entries().filter((entry) => entry.msg === CLOSED).length, 1)
})
