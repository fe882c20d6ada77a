import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, json } from '../helpers/app.ts'
import { captureLog } from '../helpers/log-capture.ts'
import { scrape } from '../helpers/scrape.ts'

/** The value of one sample line of the exposition, or undefined when the series is not there. */
function sample (text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** What a 304 or a 200 is made of, for one assertion on the whole reply. */
function replyOf (res: LightMyRequestResponse) {
  const { etag, 'cache-control': cacheControl, 'content-type': type, 'content-length': length } = res.headers
  return { status: res.statusCode, etag, cacheControl, type, length, body: res.body }
}

test('a 304 is counted in http_requests_total and the duration histogram by its status, and its request line says 304', async (t) => {
  const log = captureLog()
  const api = await buildTestApp(t, { env: { LOG_LEVEL: 'info' }, logStream: log.stream })
  const created = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: { name: 'Rex', categoryId: 7 } })
  assert.equal(created.statusCode, 201)
  const pet = created.json() as { id: number }
  const petUrl = `/v1/pets/${pet.id}`

  const petJson = JSON.stringify({ id: pet.id, name: 'Rex', categoryId: 7 })
  const full = await api.inject({ url: petUrl, headers: { ...api.auth, 'x-request-id': 'pet-200' } })
  const tag = String(full.headers.etag)
  assert.match(tag, /^"[A-Za-z0-9_-]{22}"$/)
  assert.deepEqual(replyOf(full), { status: 200, etag: tag, cacheControl: full.headers['cache-control'], type: 'application/json; charset=utf-8', length: String(petJson.length), body: petJson })
  for (const reqId of ['pet-304-a', 'pet-304-b']) {
    const notModified = await api.inject({ url: petUrl, headers: { ...api.auth, 'if-none-match': tag, 'x-request-id': reqId } })
    assert.deepEqual(replyOf(notModified), { status: 304, etag: tag, cacheControl: full.headers['cache-control'], type: undefined, length: undefined, body: '' })
  }
  const page = await api.inject({ url: '/v1/pets?limit=10', headers: { ...api.auth, 'x-request-id': 'list-200' } })
  assert.deepEqual(replyOf(page), { status: 200, etag: page.headers.etag, cacheControl: 'private, no-cache', type: 'application/json; charset=utf-8', length: String(petJson.length + 2), body: `[${petJson}]` })
  const pageNotModified = await api.inject({ url: '/v1/pets?limit=10', headers: { ...api.auth, 'if-none-match': `W/${String(page.headers.etag)}`, 'x-request-id': 'list-304' } })
  assert.deepEqual(replyOf(pageNotModified), { status: 304, etag: page.headers.etag, cacheControl: 'private, no-cache', type: undefined, length: undefined, body: '' })
  // A tag that names nothing is a whole 200, counted as one.
  const changed = await api.inject({ url: petUrl, headers: { ...api.auth, 'if-none-match': '"not-this-one"', 'x-request-id': 'pet-200-again' } })
  assert.deepEqual(replyOf(changed), replyOf(full))

  const text = await scrape(api.app)
  assert.deepEqual(
    ['200', '304'].map((status) => [
      sample(text, `http_requests_total{route="/v1/pets/:petId",method="GET",status="${status}"}`),
      sample(text, `http_request_duration_seconds_count{route="/v1/pets/:petId",method="GET",status="${status}"}`),
      sample(text, `http_requests_total{route="/v1/pets",method="GET",status="${status}"}`),
      sample(text, `http_request_duration_seconds_count{route="/v1/pets",method="GET",status="${status}"}`)
    ]),
    [[2, 2, 1, 1], [2, 2, 1, 1]]
  )
  // A 304 is no failure of any kind.
  assert.deepEqual([sample(text, 'petstore_auth_failures_total'), sample(text, 'petstore_rate_limited_total')], [0, 0])

  const lines = log.entries().filter((line) => line.msg === 'request' && line.method === 'GET')
  assert.deepEqual(lines.map(({ reqId, method, route, status, keyId }) => ({ reqId, method, route, status, keyId })), [
    { reqId: 'pet-200', method: 'GET', route: '/v1/pets/:petId', status: 200, keyId: api.keyId },
    { reqId: 'pet-304-a', method: 'GET', route: '/v1/pets/:petId', status: 304, keyId: api.keyId },
    { reqId: 'pet-304-b', method: 'GET', route: '/v1/pets/:petId', status: 304, keyId: api.keyId },
    { reqId: 'list-200', method: 'GET', route: '/v1/pets', status: 200, keyId: api.keyId },
    { reqId: 'list-304', method: 'GET', route: '/v1/pets', status: 304, keyId: api.keyId },
    { reqId: 'pet-200-again', method: 'GET', route: '/v1/pets/:petId', status: 200, keyId: api.keyId }
  ])
  for (const line of lines) assert.equal(typeof line.durationMs, 'number', `durationMs of ${String(line.reqId)}`)
})
