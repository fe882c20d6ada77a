import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { METHODS } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { test, type TestContext } from 'node:test'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
import { buildTestApp, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { metricsListenerOf, scrape } from '../helpers/scrape.ts'

/** The value of one sample line of the exposition, e.g. sample(text, 'http_requests_total{…}'). */
function sample (text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

test('GET /metrics counts requests by route template, method and status, with no key', async (t) => {
  const { app, auth } = await buildTestApp(t)
  for (const name of ['Rex', 'Tom']) {
    const res = await app.inject({ method: 'POST', url: '/v1/pets', headers: { ...auth, ...json }, payload: { name, categoryId: 1 } })
    assert.equal(res.statusCode, 201)
  }
  assert.equal((await app.inject({ url: '/v1/pets/1', headers: auth })).statusCode, 200)
  assert.equal((await app.inject({ url: '/v1/pets/999', headers: auth })).statusCode, 404)
  assert.equal((await app.inject({ url: '/v1/pets' })).statusCode, 401)
  assert.equal((await app.inject({ url: '/v1/pets', headers: { authorization: 'Bearer psk_' + 'x'.repeat(43) } })).statusCode, 401)

  const res = await metricsListenerOf(app).inject({ url: '/metrics' })
  assert.equal(res.statusCode, 200)
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
  const text = res.body
  assert.equal(sample(text, 'http_requests_total{route="/v1/pets",method="POST",status="201"}'), 2)
  // The route template, never the raw URL: ids do not become label values.
  assert.equal(sample(text, 'http_requests_total{route="/v1/pets/:petId",method="GET",status="200"}'), 1)
  assert.equal(sample(text, 'http_requests_total{route="/v1/pets/:petId",method="GET",status="404"}'), 1)
  assert.equal(sample(text, 'http_requests_total{route="/v1/pets",method="GET",status="401"}'), 2)
  assert.doesNotMatch(text, /pets\/999|pets\/1"/)
  assert.equal(sample(text, 'http_request_duration_seconds_count{route="/v1/pets",method="POST",status="201"}'), 2)
  assert.equal(sample(text, 'http_request_duration_seconds_bucket{le="+Inf",route="/v1/pets",method="POST",status="201"}'), 2)
  assert.equal(sample(text, 'petstore_pets_created_total'), 2)
  assert.equal(sample(text, 'petstore_auth_failures_total'), 2)
  assert.equal(sample(text, 'petstore_rate_limited_total'), 0)
  assert.equal(sample(text, 'petstore_store_query_duration_seconds_count{operation="createPet",outcome="ok"}'), 2)
  assert.equal(sample(text, 'petstore_store_query_duration_seconds_count{operation="getPet",outcome="ok"}'), 2)
  for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
    assert.match(text, new RegExp(`^${name} `, 'm'), `${name} is exposed`)
  }
})

/** The lines of one series of a histogram, in the order of the exposition. */
function histogramLines (text: string, name: string, labels: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}_`) && (line.includes(`,${labels}}`) || line.includes(`{${labels}}`)))
}

/**
 * performance.now, which Fastify's reply.elapsedTime and the store timing read, as a clock the
 * test moves: durations are then exact, and a duration equal to a bucket's bound can be made.
 * Milliseconds in multiples of 0.25 keep every difference exact in binary.
 */
function fakeClock (t: TestContext) {
  const clock = { ms: 1000 }
  t.mock.method(performance, 'now', () => clock.ms)
  return clock
}

test('every metric of the service is exposed with its help text and type', async (t) => {
  const { app } = await buildTestApp(t)
  const text = await scrape(app)
  const own = text.split('\n').filter((line) => /^# (HELP|TYPE) (http_|petstore_)/.test(line))
  assert.deepEqual(own, [
    '# HELP http_requests_total HTTP requests replied to, by route template, method and status.',
    '# TYPE http_requests_total counter',
    '# HELP http_request_duration_seconds Time from receiving a request to sending its reply, by route template, method and status.',
    '# TYPE http_request_duration_seconds histogram',
    '# HELP petstore_pets_created_total Pets added through createPet (idempotent replays not counted).',
    '# TYPE petstore_pets_created_total counter',
    '# HELP petstore_auth_failures_total Requests refused with 401 for a missing or invalid API key.',
    '# TYPE petstore_auth_failures_total counter',
    '# HELP petstore_rate_limited_total Requests refused with 429 by a rate limit.',
    '# TYPE petstore_rate_limited_total counter',
    '# HELP petstore_connections_reclaimed_total Connections closed to make room for a new one while MAX_CONNECTIONS were open, by the state they were in (silent, receiving, idle).',
    '# TYPE petstore_connections_reclaimed_total counter',
    '# HELP petstore_connections_refused_total Connections whose request was answered 503 because MAX_CONNECTIONS were open and each was busy.',
    '# TYPE petstore_connections_refused_total counter',
    '# HELP petstore_store_query_duration_seconds Time spent in store calls, by store operation and outcome (ok or error).',
    '# TYPE petstore_store_query_duration_seconds histogram',
    '# HELP petstore_ready Whether the instance is ready (1) or not (0), as /readyz replies; kept current on a timer.',
    '# TYPE petstore_ready gauge',
    '# HELP petstore_build_info Always 1; the labels name the version, the Node.js version and the store.',
    '# TYPE petstore_build_info gauge',
    '# HELP petstore_reply_cache_hits_total Replies sent from the reply cache, by cache (pet or list).',
    '# TYPE petstore_reply_cache_hits_total counter',
    '# HELP petstore_reply_cache_misses_total Reply cache lookups that found nothing and went to the store, by cache (pet or list).',
    '# TYPE petstore_reply_cache_misses_total counter',
    "# HELP petstore_memory_limit_bytes Memory the process may use before it is killed: its cgroup (container) limit, else the machine's memory.",
    '# TYPE petstore_memory_limit_bytes gauge'
  ])
})

test('petstore_build_info names the version of package.json, the Node.js version and the store', async (t) => {
  const { app, store } = await buildTestApp(t)
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  const text = await scrape(app)
  const lines = text.split('\n').filter((line) => line.startsWith('petstore_build_info'))
  assert.deepEqual(lines, [`petstore_build_info{version="${version}",node="${process.version}",store="${store.kind}"} 1`])
})

test('petstore_ready follows readiness on its own timer, and when /readyz checks', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const { app, store } = await buildTestApp(t)
  const ready = async () => sample(await scrape(app), 'petstore_ready')
  // Checked before the app is ready: 1 without anyone asking /readyz.
  assert.equal(await ready(), 1)
  await store.close()
  assert.equal(await ready(), 1, 'not checked again before the timer fires')
  t.mock.timers.tick(5000)
  await waitFor(async () => await ready() === 0)
  assert.equal(await ready(), 0)

  const second = await buildTestApp(t)
  assert.equal(sample(await scrape(second.app), 'petstore_ready'), 1)
  await second.store.close()
  // /readyz checks again once the last check is READINESS_FRESH_MS old.
  await sleep(READINESS_FRESH_MS + 50)
  assert.equal((await second.app.inject({ url: '/readyz' })).statusCode, 503)
  assert.equal(sample(await scrape(second.app), 'petstore_ready'), 0)
})

/** Polls an asynchronous condition (a check started by a timer settles a few turns later). */
async function waitFor (condition: () => Promise<boolean>, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await condition()) return
    await new Promise((resolve) => setImmediate(resolve))
  }
}

test('request durations fall into cumulative buckets, a duration equal to a bound into that bound\'s bucket', async (t) => {
  const clock = fakeClock(t)
  const { app } = await buildTestApp(t)
  app.get('/wait-for-test/:ms', async (request) => {
    clock.ms += Number((request.params as { ms: string }).ms)
    return {}
  })
  const waits = [0, 0.5, 1, 1.25, 2.5, 5, 7.5, 100, 1000, 20000]
  for (const ms of waits) assert.equal((await app.inject({ url: `/wait-for-test/${ms}` })).statusCode, 200)

  const text = await scrape(app)
  const labels = 'route="/wait-for-test/:ms",method="GET",status="200"'
  // The route template, never the raw URL: one series for every id.
  assert.equal(sample(text, `http_requests_total{${labels}}`), waits.length)
  assert.doesNotMatch(text, /wait-for-test\/\d/)
  const bucket = (le: string, count: number) => `http_request_duration_seconds_bucket{le="${le}",${labels}} ${count}`
  assert.deepEqual(histogramLines(text, 'http_request_duration_seconds', labels), [
    bucket('0.001', 3),
    bucket('0.0025', 5),
    bucket('0.005', 6),
    bucket('0.01', 7),
    bucket('0.025', 7),
    bucket('0.05', 7),
    bucket('0.1', 8),
    bucket('0.25', 8),
    bucket('0.5', 8),
    bucket('1', 9),
    bucket('2.5', 9),
    bucket('5', 9),
    bucket('10', 9),
    bucket('+Inf', 10),
    `http_request_duration_seconds_sum{${labels}} ${waits.reduce((sum, ms) => sum + ms / 1000, 0)}`,
    `http_request_duration_seconds_count{${labels}} 10`
  ])
})

test('store call durations fall into their own buckets, by operation', async (t) => {
  const clock = fakeClock(t)
  const reads = [0, 0.25, 0.5, 0.75, 1, 2.5, 30, 1000, 1500]
  let read = 0
  const { app, auth } = await buildTestApp(t, {
    faults: { beforeStoreCall: (operation) => { if (operation === 'getPet') clock.ms += reads[read++]! } }
  })
  for (let i = 0; i < reads.length; i++) assert.equal((await app.inject({ url: '/v1/pets/1', headers: auth })).statusCode, 404)

  const text = await scrape(app)
  const labels = 'operation="getPet",outcome="ok"'
  const bucket = (le: string, count: number) => `petstore_store_query_duration_seconds_bucket{le="${le}",${labels}} ${count}`
  assert.deepEqual(histogramLines(text, 'petstore_store_query_duration_seconds', labels), [
    bucket('0.0001', 1),
    bucket('0.0005', 3),
    bucket('0.001', 5),
    bucket('0.0025', 6),
    bucket('0.005', 6),
    bucket('0.01', 6),
    bucket('0.025', 6),
    bucket('0.05', 7),
    bucket('0.1', 7),
    bucket('0.25', 7),
    bucket('1', 8),
    bucket('+Inf', 9),
    `petstore_store_query_duration_seconds_sum{${labels}} ${reads.reduce((sum, ms) => sum + ms / 1000, 0)}`,
    `petstore_store_query_duration_seconds_count{${labels}} 9`
  ])
  // The other calls of the same requests took no time on this clock.
  assert.equal(sample(text, 'petstore_store_query_duration_seconds_bucket{le="0.0001",operation="findApiKeyByHash",outcome="ok"}'), 1)
})

test('paths no route matches share one series, route="unmatched"', async (t) => {
  const { app } = await buildTestApp(t)
  for (const url of ['/nope', '/nope/1', '/v2/pets/7?x=1']) assert.equal((await app.inject({ url })).statusCode, 404)
  const text = await scrape(app)
  const requests = text.split('\n').filter((line) => line.startsWith('http_requests_total{'))
  assert.deepEqual(requests, ['http_requests_total{route="unmatched",method="GET",status="404"} 3'])
  assert.doesNotMatch(text, /nope|\/v2\//)
})

test('each app counts only its own requests', async (t) => {
  const first = await buildTestApp(t)
  const second = await buildTestApp(t)
  await first.app.inject({ url: '/v1/pets' })
  const text = await scrape(second.app)
  assert.equal(sample(text, 'petstore_auth_failures_total'), 0)
  assert.equal(sample(await scrape(first.app), 'petstore_auth_failures_total'), 1)
})

test('rate-limited replies (429) are counted', async (t) => {
  const { app } = await buildTestApp(t)
  app.get('/limited-for-test', async (_request, reply) => reply.code(429).send({ code: 'rate_limited', message: 'slow down', status: 429 }))
  await app.inject({ url: '/limited-for-test' })
  await app.inject({ url: '/limited-for-test' })
  const text = await scrape(app)
  assert.equal(sample(text, 'petstore_rate_limited_total'), 2)
})

test('store failures are timed with outcome="error"', async (t) => {
  const { app, store, auth } = await buildTestApp(t)
  // Ready first: its readiness check would otherwise meet the closed store too.
  await app.ready()
  await store.close()
  const res = await app.inject({ url: '/v1/pets/1', headers: auth })
  assert.equal(res.statusCode, 500)
  const text = await scrape(app)
  const failed = text.split('\n').filter((line) => line.startsWith('petstore_store_query_duration_seconds_count{') && line.includes('outcome="error"'))
  assert.equal(failed.length, 1, failed.join('\n'))
  assert.match(failed[0]!, /^petstore_store_query_duration_seconds_count\{operation="\w+",outcome="error"\} 1$/)
})

test('/metrics is served on the metrics listener only: the API port replies 404, as for any unknown path', async (t) => {
  const { app } = await buildTestApp(t)
  const document = JSON.parse((await app.inject({ url: '/v1/openapi.json' })).body)
  assert.deepEqual(Object.keys(document.paths), ['/pets', '/pets/{petId}'])
  for (const method of ['GET', 'HEAD'] as const) {
    const res = await app.inject({ method, url: '/metrics' })
    assert.equal(res.statusCode, 404, method)
  }
  assertError(await app.inject({ url: '/metrics' }), 404, 'not_found', 'No route for GET /metrics.')
})

test('the metrics listener: GET builds the exposition, HEAD replies with its headers without building it, other methods 405 and other paths 404', async (t) => {
  const { app } = await buildTestApp(t)
  const listener = metricsListenerOf(app)
  const builds = t.mock.method(app.metrics.registry, 'metrics')
  const head = await listener.inject({ method: 'HEAD', url: '/metrics' })
  assert.deepEqual([head.statusCode, head.headers['content-type'], head.headers['cache-control'], head.body], [200, app.metrics.registry.contentType, 'no-store', ''])
  assert.equal(builds.mock.callCount(), 0, 'HEAD builds nothing')
  const get = await listener.inject({ url: '/metrics' })
  assert.deepEqual([get.statusCode, get.headers['content-type'], get.headers['cache-control']], [200, app.metrics.registry.contentType, 'no-store'])
  assert.equal(builds.mock.callCount(), 1)
  for (const method of ['POST', 'DELETE', 'PROPFIND'] as const) {
    const res = await listener.inject({ method, url: '/metrics' })
    assertError(res, 405, 'method_not_allowed', `${method} is not allowed here; allowed: GET, HEAD.`, { label: method })
    assert.equal(res.headers.allow, 'GET, HEAD', method)
  }
  const elsewhere = await listener.inject({ url: '/v1/pets' })
  assertError(elsewhere, 404, 'not_found', 'No route for GET /v1/pets.')
  assert.equal(builds.mock.callCount(), 1)
})

test('a sweep of every method Node accepts over a dozen paths leaves the series few: other methods count as method="other"', async (t) => {
  const { app, auth } = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '100000' } })
  const paths = ['/', '/healthz', '/readyz', '/docs', '/docs/', '/v1/openapi.json', '/v1/pets', '/v1/pets/', '/v1/pets/1', '/v1/pets/1/x', '/nope', '/v2/pets']
  let requests = 0
  for (const method of METHODS) {
    for (const url of paths) {
      for (const headers of [{}, auth]) {
        await app.inject({ method: method as 'GET', url, headers })
        requests++
      }
    }
  }
  assert.ok(requests > 700, `${requests} requests`)
  const text = await scrape(app)
  const requestSeries = text.split('\n').filter((line) => line.startsWith('http_requests_total{'))
  // About a dozen routes, eight method values and the statuses they reply with.
  assert.ok(requestSeries.length <= 120, `${requestSeries.length} series of http_requests_total`)
  const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
  assert.ok(samples.length <= 2200, `${samples.length} samples in the exposition`)
  const methods = new Set(requestSeries.map((line) => /method="([^"]+)"/.exec(line)![1]))
  assert.deepEqual([...methods].sort(), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'other'])
})
