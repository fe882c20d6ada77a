import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { issueKeyExpiringAt, postPet, type PetJson } from '../helpers/api-steps.ts'
import { buildTestApp, issueKey, json, openapiDocument, STORE_KIND, TEST_AUDIT, testConfig } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { documentedErrors, exchange, listenTestApp } from '../helpers/raw-http.ts'

/**
 * The auth matrix: every credential below against every protected route. Auth comes first,
 * so each route is called with a request that would succeed with a good key.
 */

interface Keys { valid: string, revoked: string, expired: string, unknown: string }

const REALM = 'Bearer realm="petstore"'
const INVALID_TOKEN = 'Bearer realm="petstore", error="invalid_token"'
const UNAUTHORIZED = 'A valid API key is required: send Authorization: Bearer <key>.'

/** undefined sends no Authorization header; challenge undefined means the key is accepted. */
const CREDENTIALS: Array<{ credential: string, header: (keys: Keys) => string | undefined, challenge?: string }> = [
  { credential: 'no Authorization header', header: () => undefined, challenge: REALM },
  { credential: 'an empty Authorization header', header: () => '', challenge: REALM },
  { credential: 'the key with no scheme', header: (k) => k.valid, challenge: REALM },
  { credential: 'the wrong scheme (Basic)', header: (k) => `Basic ${Buffer.from(`user:${k.valid}`).toString('base64')}`, challenge: REALM },
  { credential: 'the key under another scheme (Token)', header: (k) => `Token ${k.valid}`, challenge: REALM },
  { credential: 'the scheme alone', header: () => 'Bearer', challenge: INVALID_TOKEN },
  { credential: 'an empty token', header: () => 'Bearer ', challenge: INVALID_TOKEN },
  { credential: 'a malformed token', header: () => 'Bearer not-a-key', challenge: INVALID_TOKEN },
  { credential: 'the key cut short', header: (k) => `Bearer ${k.valid.slice(0, -1)}`, challenge: INVALID_TOKEN },
  { credential: 'the key with a character more', header: (k) => `Bearer ${k.valid}A`, challenge: INVALID_TOKEN },
  { credential: 'the key in capitals', header: (k) => `Bearer ${k.valid.toUpperCase()}`, challenge: INVALID_TOKEN },
  { credential: 'the key followed by another word', header: (k) => `Bearer ${k.valid} extra`, challenge: INVALID_TOKEN },
  { credential: 'the key twice', header: (k) => `Bearer ${k.valid}, Bearer ${k.valid}`, challenge: INVALID_TOKEN },
  { credential: 'a well-formed key never issued', header: (k) => `Bearer ${k.unknown}`, challenge: INVALID_TOKEN },
  { credential: 'a revoked key', header: (k) => `Bearer ${k.revoked}`, challenge: INVALID_TOKEN },
  { credential: 'an expired key', header: (k) => `Bearer ${k.expired}`, challenge: INVALID_TOKEN },
  { credential: 'a valid key', header: (k) => `Bearer ${k.valid}` },
  { credential: 'a valid key, scheme in lower case', header: (k) => `bearer ${k.valid}` },
  { credential: 'a valid key, scheme in capitals', header: (k) => `BEARER ${k.valid}` },
  { credential: 'a valid key and a trailing space (HTTP strips it)', header: (k) => `Bearer ${k.valid} ` },
  { credential: 'a valid key after two spaces', header: (k) => `Bearer  ${k.valid}` }
]

/** A request per protected route that succeeds with a good key. */
const PROTECTED: Array<{ route: string, operationId: string, request: (pet: PetJson) => InjectOptions, ok: number }> = [
  { route: 'GET /v1/pets', operationId: 'listPets', request: () => ({ url: '/v1/pets' }), ok: 200 },
  { route: 'HEAD /v1/pets', operationId: 'listPets', request: () => ({ method: 'HEAD', url: '/v1/pets' }), ok: 200 },
  { route: 'POST /v1/pets', operationId: 'createPet', request: () => ({ method: 'POST', url: '/v1/pets', headers: json, payload: '{"name":"Rex","categoryId":7}' }), ok: 201 },
  { route: 'GET /v1/pets/{petId}', operationId: 'getPet', request: (pet) => ({ url: `/v1/pets/${pet.id}` }), ok: 200 },
  { route: 'HEAD /v1/pets/{petId}', operationId: 'getPet', request: (pet) => ({ method: 'HEAD', url: `/v1/pets/${pet.id}` }), ok: 200 }
]

test('the matrix covers every operation that openapi.json marks as needing a key', () => {
  const secured = Object.values(openapiDocument.paths as Record<string, Record<string, { operationId: string, security?: unknown[] }>>)
    .flatMap((methods) => Object.values(methods))
    .filter((operation) => (operation.security ?? []).length > 0)
    .map((operation) => operation.operationId)
  assert.deepEqual(new Set(PROTECTED.map((route) => route.operationId)), new Set(secured))
})

describe('auth matrix', () => {
  for (const { route, request, ok } of PROTECTED) {
    test(route, async (t) => {
      const api = await buildTestApp(t)
      const revoked = await issueKey(api.store, 'revoked')
      await api.store.revokeApiKey(revoked.id, TEST_AUDIT)
      const keys: Keys = {
        valid: api.key,
        revoked: revoked.key,
        expired: await issueKeyExpiringAt(api.store, new Date(Date.now() - 1000)),
        unknown: 'psk_' + 'A'.repeat(43)
      }
      const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
      for (const { credential, header, challenge } of CREDENTIALS) {
        await t.test(credential, async () => {
          const base = request(pet)
          const authorization = header(keys)
          const headers = { ...base.headers as Record<string, string>, ...(authorization === undefined ? {} : { authorization }) }
          const before = await api.store.countPets()
          const res = await api.inject({ ...base, headers })
          if (challenge === undefined) {
            assert.equal(res.statusCode, ok, res.body)
            return
          }
          if (base.method === 'HEAD') assert.equal(res.statusCode, 401, res.body)
          else assertError(res, 401, 'unauthorized', UNAUTHORIZED)
          assert.equal(res.headers['www-authenticate'], challenge)
          assert.equal(await api.store.countPets(), before, 'nothing stored')
        })
      }
    })
  }
})

describe('authentication comes before everything else', () => {
  const BAD_REQUESTS: Array<{ request: string, options: InjectOptions }> = [
    { request: 'malformed JSON', options: { method: 'POST', url: '/v1/pets', headers: json, payload: '{"name":' } },
    { request: 'a body missing fields', options: { method: 'POST', url: '/v1/pets', headers: json, payload: '{}' } },
    { request: 'a body of the wrong type', options: { method: 'POST', url: '/v1/pets', headers: { 'content-type': 'text/plain' }, payload: 'Rex' } },
    { request: 'a body of 2 MiB', options: { method: 'POST', url: '/v1/pets', headers: json, payload: `{"name":"${'x'.repeat(2 * 1024 * 1024)}","categoryId":7}` } },
    { request: 'limit out of range', options: { url: '/v1/pets?limit=0' } },
    { request: 'a forged cursor', options: { url: '/v1/pets?cursor=!!' } },
    { request: 'a petId that is not an integer', options: { url: '/v1/pets/rex' } },
    { request: 'a petId never assigned', options: { url: '/v1/pets/9223372036854775807' } },
    { request: 'a method the pet path does not allow', options: { method: 'DELETE', url: '/v1/pets/1' } },
    { request: 'a method the list path does not allow', options: { method: 'PUT', url: '/v1/pets', headers: json, payload: '{}' } }
  ]
  for (const authorization of [undefined, 'Bearer not-a-key']) {
    test(`${authorization ? 'a malformed key' : 'no key'} gets 401, not 400, 404, 405, 413 or 415`, async (t) => {
      const api = await buildTestApp(t)
      for (const { request, options } of BAD_REQUESTS) {
        await t.test(request, async () => {
          const headers = { ...options.headers as Record<string, string>, ...(authorization ? { authorization } : {}) }
          const res = await api.inject({ ...options, headers })
          assertError(res, 401, 'unauthorized', UNAUTHORIZED)
        })
      }
      assert.equal(await api.store.countPets(), 0)
    })
  }
})

describe('Authorization sent more than once', () => {
  const TWICE = 'Authorization was sent more than once; send exactly one: Authorization: Bearer <key>.'
  const TWICE_DETAILS = [{ field: 'header.authorization', message: 'must be sent once' }]

  // Over TCP: Node keeps the first of two Authorization fields in request.headers and drops the other.
  test('two Authorization fields are 400 invalid_request, whichever holds the valid key: neither is picked', async (t) => {
    const api = await listenTestApp(t)
    const unknown = `Bearer psk_${'A'.repeat(43)}`
    const requests: Array<[what: string, request: string]> = [
      ['the valid key first', get('/v1/pets', [`Authorization: Bearer ${api.key}`, `Authorization: ${unknown}`])],
      ['the valid key second', get('/v1/pets', [`Authorization: ${unknown}`, `Authorization: Bearer ${api.key}`])],
      ['the valid key twice, names in two cases', get('/v1/pets/1', [`authorization: Bearer ${api.key}`, `AUTHORIZATION: Bearer ${api.key}`])],
      ['a create with the valid key and an empty field', post('{"name":"Rex","categoryId":7}', [`Authorization: Bearer ${api.key}`, 'Authorization: '])]
    ]
    for (const [what, request] of requests) {
      const response = await exchange(api.port, request)
      const [method, url] = request.split(' ')
      assert.deepEqual(documentedErrors(method!, url!, response), [], what)
      assertError(response, 400, 'invalid_request', TWICE, { details: TWICE_DETAILS, label: what })
    }
    assert.equal(await api.store.countPets(), 0)
    const once = await exchange(api.port, get('/v1/pets', [`Authorization: Bearer ${api.key}`]))
    assert.deepEqual([once.status, once.body], [200, '[]'], 'one field is still read as before')
  })
})

function get (path: string, fields: string[]): string {
  return `GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n${fields.map((field) => `${field}\r\n`).join('')}\r\n`
}

function post (body: string, fields: string[]): string {
  return `POST /v1/pets HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${fields.map((field) => `${field}\r\n`).join('')}\r\n${body}`
}

describe('key lifetime', () => {
  // The documented bound of the key cache: on SQLite the next millisecond (it re-reads the
  // database's change counter once per millisecond); on PostgreSQL KEY_CACHE_TTL_MS, since
  // another instance or the CLI may have made the revocation.
  const REVOCATION_BOUND_MS = STORE_KIND === 'sqlite' ? 1 : testConfig().KEY_CACHE_TTL_MS
  test(`a revoked key stops working within ${REVOCATION_BOUND_MS} ms; other keys go on`, async (t) => {
    let clock = Date.now()
    const api = await buildTestApp(t, { now: () => clock })
    const other = await issueKey(api.store, 'other')
    const asOther = { authorization: `Bearer ${other.key}` }
    assert.equal((await api.inject({ url: '/v1/pets', headers: asOther })).statusCode, 200)
    assert.equal((await api.store.revokeApiKey(other.id, TEST_AUDIT)).outcome, 'revoked')
    clock += REVOCATION_BOUND_MS
    const res = await api.inject({ url: '/v1/pets', headers: asOther })
    assertError(res, 401, 'unauthorized', UNAUTHORIZED)
    assert.equal((await api.inject({ url: '/v1/pets', headers: api.auth })).statusCode, 200)
  })

  test('a key with an expiry works until the instant before it and not from it on', async (t) => {
    const expiresAt = Date.parse('2031-01-01T00:00:00Z')
    let clock = expiresAt - 1
    const api = await buildTestApp(t, { now: () => clock })
    const key = await issueKeyExpiringAt(api.store, new Date(expiresAt))
    const headers = { authorization: `Bearer ${key}` }
    assert.equal((await api.inject({ url: '/v1/pets', headers })).statusCode, 200)
    clock = expiresAt
    assert.equal((await api.inject({ url: '/v1/pets', headers })).statusCode, 401)
  })
})
