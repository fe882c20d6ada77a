import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { connectRedis } from '../../src/auth/redis.ts'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
import { buildTestApp } from '../helpers/app.ts'
import { captureLog } from '../helpers/log-capture.ts'
import { startRedisServer } from '../helpers/redis-server.ts'

test('/readyz replies ready; with ?verbose it lists each dependency, without REDIS_URL the store only', async (t) => {
  const { app } = await buildTestApp(t)
  const ready = (url: string) => app.inject({ url }).then((res) => ({ status: res.statusCode, body: JSON.parse(res.body) as unknown }))
  assert.deepEqual(await ready('/readyz'), { status: 200, body: { status: 'ready' } })
  assert.deepEqual(await ready('/readyz?verbose'), { status: 200, body: { status: 'ready', checks: { store: 'up' } } })
})

test('a burst of /readyz makes a handful of store checks, not one each: probes share a check in flight and its result for a moment', async (t) => {
  let checks = 0
  const { app } = await buildTestApp(t, { faults: { beforeStoreCall: (operation) => { if (operation === 'checkReady') checks++ } } })
  await app.ready()
  const started = performance.now()
  const statuses: number[] = []
  for (let round = 0; round < 10; round++) {
    const burst = await Promise.all(Array.from({ length: 100 }, () => app.inject({ url: '/readyz' })))
    statuses.push(...burst.map((res) => res.statusCode))
  }
  const elapsed = performance.now() - started
  assert.deepEqual(new Set(statuses), new Set([200]))
  assert.equal(statuses.length, 1000)
  // The one check before the app was ready, then at most one per READINESS_FRESH_MS.
  assert.ok(checks <= 2 + elapsed / READINESS_FRESH_MS, `${checks} store checks for 1000 probes in ${Math.round(elapsed)} ms`)
})

test('a burst of /readyz?verbose makes a handful of Redis PINGs, not one each: probes share a PING in flight and its result for a moment', async (t) => {
  const server = await startRedisServer(t)
  if (!server) return
  const redis = await connectRedis(server.url, 1000)
  const { app } = await buildTestApp(t, { redis })
  await app.ready()
  // The PINGs this Redis has answered, counted by Redis itself.
  const counter = new Redis(server.url, { lazyConnect: true })
  await counter.connect()
  t.after(() => counter.disconnect())
  const pings = async () => Number(/^cmdstat_ping:calls=(\d+),/m.exec(await counter.info('commandstats'))?.[1] ?? 0)
  await counter.config('RESETSTAT')
  assert.equal(await pings(), 0)

  const started = performance.now()
  const replies: string[] = []
  for (let round = 0; round < 10; round++) {
    const burst = await Promise.all(Array.from({ length: 100 }, () => app.inject({ url: '/readyz?verbose' })))
    replies.push(...burst.map((res) => `${res.statusCode} ${res.body}`))
  }
  const elapsed = performance.now() - started
  const counted = await pings()
  assert.deepEqual(new Set(replies), new Set(['200 {"status":"ready","checks":{"store":"up","redis":"up"}}']))
  assert.equal(replies.length, 1000)
  assert.ok(counted >= 1, 'the probes asked Redis')
  // At most one PING per READINESS_FRESH_MS, and the one in flight.
  assert.ok(counted <= 1 + elapsed / READINESS_FRESH_MS, `${counted} PINGs for 1000 probes in ${Math.round(elapsed)} ms`)
})

test('/readyz sees a lost store at its next check, at most READINESS_FRESH_MS later, and logs the loss once', async (t) => {
  const log = captureLog()
  const { app, store } = await buildTestApp(t, { logStream: log.stream, env: { LOG_LEVEL: 'info' } })
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200)
  await store.close()
  await sleep(READINESS_FRESH_MS + 50)
  for (let i = 0; i < 5; i++) assert.equal((await app.inject({ url: '/readyz' })).statusCode, 503)
  await sleep(READINESS_FRESH_MS + 50)
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 503)
  assert.deepEqual(log.entries().filter((entry) => entry.msg === 'not ready: store').length, 1)
})
