import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, json } from './helpers.ts'

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

  const res = await app.inject({ url: '/metrics' })
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

test('each app counts only its own requests', async (t) => {
  const first = await buildTestApp(t)
  const second = await buildTestApp(t)
  await first.app.inject({ url: '/v1/pets' })
  const text = (await second.app.inject({ url: '/metrics' })).body
  assert.equal(sample(text, 'petstore_auth_failures_total'), 0)
  assert.equal(sample((await first.app.inject({ url: '/metrics' })).body, 'petstore_auth_failures_total'), 1)
})

test('rate-limited answers (429) are counted', async (t) => {
  const { app } = await buildTestApp(t)
  app.get('/limited-for-test', async (_request, reply) => reply.code(429).send({ code: 'rate_limited', message: 'slow down', status: 429 }))
  await app.inject({ url: '/limited-for-test' })
  await app.inject({ url: '/limited-for-test' })
  const text = (await app.inject({ url: '/metrics' })).body
  assert.equal(sample(text, 'petstore_rate_limited_total'), 2)
})

test('store failures are timed with outcome="error"', async (t) => {
  const { app, store, auth } = await buildTestApp(t)
  await store.close()
  const res = await app.inject({ url: '/v1/pets/1', headers: auth })
  assert.equal(res.statusCode, 500)
  const text = (await app.inject({ url: '/metrics' })).body
  const failed = text.split('\n').filter((line) => line.startsWith('petstore_store_query_duration_seconds_count{') && line.includes('outcome="error"'))
  assert.equal(failed.length, 1, failed.join('\n'))
  assert.match(failed[0]!, /^petstore_store_query_duration_seconds_count\{operation="\w+",outcome="error"\} 1$/)
})

test('/metrics is not an operation of the OpenAPI document and allows only GET and HEAD', async (t) => {
  const { app } = await buildTestApp(t)
  const document = JSON.parse((await app.inject({ url: '/v1/openapi.json' })).body)
  assert.deepEqual(Object.keys(document.paths), ['/pets', '/pets/{petId}'])
  const res = await app.inject({ method: 'POST', url: '/metrics' })
  assert.equal(res.statusCode, 405)
  assert.equal(res.headers.allow, 'GET, HEAD')
})
