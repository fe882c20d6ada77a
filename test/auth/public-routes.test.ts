import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

/** The rate-limit fields of a response, the reset time left out (it counts down within the minute). */
function limitOf (res: LightMyRequestResponse) {
  return {
    status: res.statusCode,
    policy: res.headers['ratelimit-policy'],
    state: res.headers.ratelimit === undefined ? undefined : String(res.headers.ratelimit).replace(/;t=\d+$/, '')
  }
}

const anonymous = (status: number, left: number) => ({ status, policy: '"failed-auth";q=20;w=60', state: `"failed-auth";r=${left}` })

describe('the public routes: no key needed, every request counted', () => {
  test('without a key, the docs, the OpenAPI document, unknown paths and wrong methods count against the address, each response saying so', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '20' } })
    const responses = [
      await app.app.inject({ url: '/nothing-here' }),
      await app.app.inject({ url: '/v1/nothing-here' }),
      await app.app.inject({ method: 'DELETE', url: '/v1/openapi.json' }),
      await app.app.inject({ url: '/v1/openapi.json' }),
      await app.app.inject({ url: '/docs' }),
      await app.app.inject({ method: 'PUT', url: '/docs/' }),
      await app.app.inject({ url: '/docs/missing.js' }),
      // A key that is no key is no key: counted against the address, and no 401 here.
      await app.app.inject({ url: '/nothing-here', headers: { authorization: 'Bearer psk_not-a-real-key' } })
    ]
    assert.deepEqual(responses.map(limitOf), [404, 404, 405, 200, 301, 405, 404, 404].map((status, i) => anonymous(status, 19 - i)))
    assertError(responses[1]!, 404, 'not_found', 'No route for GET /v1/nothing-here.')
  })

  test('with a usable key, the same requests count against the key\'s own limit', async (t) => {
    const app = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '10', FAILED_AUTH_LIMIT_PER_MINUTE: '20' } })
    const responses = [
      await app.app.inject({ url: '/nothing-here', headers: app.auth }),
      await app.app.inject({ method: 'POST', url: '/v1/openapi.json', headers: app.auth }),
      await app.app.inject({ url: '/v1/pets', headers: app.auth })
    ]
    assert.deepEqual(responses.map(limitOf), [404, 405, 200].map((status, i) => ({ status, policy: '"default";q=10;w=60', state: `"default";r=${9 - i}` })))
  })

  test('scanning paths is not free: past the address limit, 429 with Retry-After, and the address\'s pet calls are refused too', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '20' } })
    for (let i = 0; i < 20; i++) assert.equal((await app.app.inject({ url: `/scan/${i}` })).statusCode, 404)
    const refused = await app.app.inject({ url: '/scan/20' })
    assert.deepEqual(limitOf(refused), anonymous(429, 0))
    assert.match(String(refused.headers['retry-after']), /^\d+$/)
    assertError(refused, 429, 'rate_limited', 'Too many requests without a valid API key came from this address; retry after the time in Retry-After.')
    assert.deepEqual(limitOf(await app.app.inject({ url: '/docs/' })), anonymous(429, 0))
    assert.deepEqual(limitOf(await app.app.inject({ url: '/v1/pets', headers: app.auth })), anonymous(429, 0))
  })

  test('the probes are exempt: /healthz and /readyz, and their wrong methods, carry no rate limit and are not counted', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '20' } })
    const probes = []
    for (const url of ['/healthz', '/readyz']) {
      probes.push(await app.app.inject({ url }), await app.app.inject({ method: 'POST', url }))
    }
    assert.deepEqual(probes.map(limitOf), [200, 405, 200, 405].map((status) => ({ status, policy: undefined, state: undefined })))
    assert.deepEqual(limitOf(await app.app.inject({ url: '/nothing-here' })), anonymous(404, 19))
  })
})
