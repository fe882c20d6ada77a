import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { METHODS as METHODS_NODE_PARSES } from 'node:http'
import type { HTTPMethods } from 'fastify'
import { buildTestApp, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { scrape } from '../helpers/scrape.ts'

/** Every non-2xx response is {code, message, status} with status equal to the HTTP status. */

describe('unknown routes', () => {
  const UNKNOWN: Array<[method: HTTPMethods, path: string]> = [
    ['GET', '/'],
    ['GET', '/nope'],
    ['GET', '/v1'],
    ['GET', '/v1/nope'],
    ['GET', '/v2/pets'],
    ['GET', '/v1/pets/1/owner'],
    ['POST', '/v1/orders'],
    ['DELETE', '/v1/categories/7']
  ]
  test('reply 404 not_found naming the method and path, with or without a key', async (t) => {
    const api = await buildTestApp(t)
    for (const [method, path] of UNKNOWN) {
      for (const headers of [{}, api.auth]) {
        await t.test(`${method} ${path}${'authorization' in headers ? ' with a key' : ''}`, async () => {
          const res = await api.inject({ method, url: `${path}?q=1`, headers })
          assertError(res, 404, 'not_found', `No route for ${method} ${path}.`)
        })
      }
    }
  })
})

describe('an unknown path sent a body', () => {
  test('is 404 not_found whatever the body: it is never read, so never 400, 413 or 415', async (t) => {
    const api = await buildTestApp(t)
    const bodies: Array<[string, string]> = [
      ['application/json', ''],
      ['application/json', '{"name": '],
      ['application/json', JSON.stringify({ name: 'x'.repeat(20_000) })],
      ['text/plain', 'hello'],
      ['application/json; charset=latin1', '{}']
    ]
    for (const [path, headers] of [['/nowhere', {}], ['/v1/nowhere', api.auth]] as const) {
      for (const [type, payload] of bodies) {
        const res = await api.inject({ method: 'POST', url: path, headers: { ...headers, 'content-type': type }, payload })
        assertError(res, 404, 'not_found', `No route for POST ${path}.`, { label: `${path} ${type} ${payload.slice(0, 20)}` })
      }
    }
  })
})

describe('a trailing slash after /v1/pets', () => {
  const notFound = (method: string) => `No route for ${method} /v1/pets/; the animals are at /v1/pets, without the trailing slash.`
  const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']

  test('names no resource: 404 not_found for every method, never a 400 about a petId nobody sent', async (t) => {
    const api = await buildTestApp(t)
    for (const method of METHODS) {
      const res = await api.inject({ method, url: '/v1/pets/?limit=5', headers: api.auth })
      assertError(res, 404, 'not_found', notFound(method), { label: method })
    }
    const head = await api.inject({ method: 'HEAD', url: '/v1/pets/', headers: api.auth })
    assert.deepEqual([head.statusCode, head.body], [404, ''])
  })

  test('a create sent there is 404 before its body is read, and stores nothing', async (t) => {
    const api = await buildTestApp(t)
    for (const [contentType, payload] of [['application/json', '{"name":"Rex","categoryId":7}'], ['text/plain', 'x'.repeat(100_000)]]) {
      const res = await api.inject({ method: 'POST', url: '/v1/pets/', headers: { ...api.auth, 'content-type': contentType! }, payload })
      assertError(res, 404, 'not_found', notFound('POST'), { label: contentType })
    }
    assert.equal(await api.store.countPets(), 0)
  })

  test('authentication still comes first: without a valid key it is 401', async (t) => {
    const api = await buildTestApp(t)
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      for (const headers of [{}, { authorization: 'Bearer psk_0000000000000000000000000000000000000000000' }]) {
        const res = await api.inject({ method, url: '/v1/pets/', headers })
        assertError(res, 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.', { label: method })
      }
    }
  })

  test('is counted under a route of its own in the metrics', async (t) => {
    const api = await buildTestApp(t)
    await api.inject({ url: '/v1/pets/', headers: api.auth })
    const metrics = await scrape(api.app)
    assert.match(metrics, /^http_requests_total\{route="\/v1\/pets\/",method="GET",status="404"\} 1$/m)
    assert.doesNotMatch(metrics, /route="\/v1\/pets\/:petId"/)
  })
})

describe('methods a known path does not serve', () => {
  const PATHS: Array<[path: string, allow: string]> = [
    ['/v1/pets', 'GET, HEAD, POST'],
    ['/v1/pets/1', 'GET, HEAD'],
    ['/v1/openapi.json', 'GET, HEAD'],
    ['/healthz', 'GET, HEAD'],
    ['/readyz', 'GET, HEAD']
  ]
  // Every method Node's parser accepts (TRACE, QUERY, PROPFIND, PURGE…); CONNECT has a test of its own (framework-errors).
  const METHODS = METHODS_NODE_PARSES.filter((method) => method !== 'CONNECT') as HTTPMethods[]
  test('reply 405 method_not_allowed with Allow listing what is served', async (t) => {
    const api = await buildTestApp(t)
    for (const [path, allow] of PATHS) {
      for (const method of METHODS.filter((m) => !allow.split(', ').includes(m))) {
        await t.test(`${method} ${path}`, async () => {
          const res = await api.inject({ method, url: path, headers: { ...api.auth, ...json }, payload: method === 'GET' ? undefined : '{}' })
          assertError(res, 405, 'method_not_allowed', `${method} is not allowed here; allowed: ${allow}.`)
          assert.equal(res.headers.allow, allow)
        })
      }
    }
    assert.equal(await api.store.countPets(), 0)
  })

  test('TRACE is 405 with Allow and the Error body, and never echoes the request', async (t) => {
    const api = await buildTestApp(t)
    const secrets = { ...api.auth, cookie: 'session=cookie-secret', 'x-secret': 'header-secret' }
    for (const [path, allow] of PATHS) {
      const res = await api.inject({ method: 'TRACE', url: `${path}?q=query-secret`, headers: secrets })
      assertError(res, 405, 'method_not_allowed', `TRACE is not allowed here; allowed: ${allow}.`, { label: path })
      assert.equal(res.headers.allow, allow)
    }
    const unauthenticated = await api.inject({ method: 'TRACE', url: '/v1/pets', headers: { cookie: 'session=cookie-secret' } })
    assertError(unauthenticated, 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.', { label: 'authentication still comes first on the pet paths' })
  })

  test('a body sent with a method the path does not serve is never read: 405, not 413 or 415', async (t) => {
    const api = await buildTestApp(t)
    for (const method of ['POST', 'PUT', 'QUERY'] as HTTPMethods[]) {
      const res = await api.inject({ method, url: '/v1/pets/1', headers: { ...api.auth, 'content-type': 'text/plain' }, payload: 'x'.repeat(100_000) })
      assertError(res, 405, 'method_not_allowed', `${method} is not allowed here; allowed: GET, HEAD.`, { label: method })
    }
  })

  test('OPTIONS that is no CORS preflight (no Origin, or no Access-Control-Request-Method) is 405 with Allow; without a key on a pet path, 401 first', async (t) => {
    const api = await buildTestApp(t)
    const notPreflights: Array<Record<string, string>> = [{}, { 'access-control-request-method': 'POST' }, { origin: 'https://example.com' }]
    for (const [path, allow] of PATHS) {
      for (const headers of notPreflights) {
        const res = await api.inject({ method: 'OPTIONS', url: path, headers: { ...api.auth, ...headers } })
        assertError(res, 405, 'method_not_allowed', `OPTIONS is not allowed here; allowed: ${allow}.`, { label: `${path} ${JSON.stringify(headers)}` })
        assert.equal(res.headers.allow, allow)
        assert.equal(res.headers['access-control-allow-methods'], undefined)
      }
    }
    const unauthenticated = await api.inject({ method: 'OPTIONS', url: '/v1/pets', headers: { 'access-control-request-method': 'POST' } })
    assertError(unauthenticated, 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')
  })
})

describe('bodies the service does not take', () => {
  test('a body that is not application/json replies 415 unsupported_media_type', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'text/csv' }, payload: 'Rex,7' })
    assertError(res, 415, 'unsupported_media_type', 'The request body must be application/json.')
  })

  test('a JSON body declared in a charset other than UTF-8 replies 415 and stores nothing', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json; charset=latin1' }, payload: '{"name":"Rex","categoryId":7}' })
    assertError(res, 415, 'unsupported_media_type', 'The request body must be UTF-8 JSON; charset=latin1 is not supported.')
    assert.equal(await api.store.countPets(), 0)
  })

  test('a body over 16 KiB replies 413 payload_too_large', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":"Rex","categoryId":7,"pad":"${'x'.repeat(16 * 1024)}"}` })
    assertError(res, 413, 'payload_too_large', 'The request body is larger than the limit of 16 KiB.')
  })

  test('malformed JSON replies 400 invalid_request', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: '{"name":' })
    assertError(res, 400, 'invalid_request', 'The request body is not valid JSON: Unexpected end of JSON input')
  })
})

test('every error response is JSON with the request id in X-Request-Id', async (t) => {
  const api = await buildTestApp(t)
  const res = await api.inject({ url: '/v1/pets/rex', headers: { ...api.auth, 'x-request-id': 'trace-42' } })
  assertError(res, 400, 'invalid_request', 'Invalid request: path.petId must be an integer (int64).', { details: [{ field: 'path.petId', message: 'must be an integer (int64)' }] })
  assert.equal(res.headers['x-request-id'], 'trace-42')
})
