import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { fullFormats } from 'ajv-formats/dist/formats.js'
import { postPet } from '../helpers/api-steps.ts'
import { buildTestApp } from '../helpers/app.ts'
import { assertError, type ErrorCode, type ErrorDetails } from '../helpers/errors.ts'

const SUNSET = Date.parse('2030-12-05T00:00:00Z')
const NEVER_ASSIGNED = '9223372036854775807'

/** What every getPet response carries, whatever its status (RFC 9745, RFC 8594, RFC 8288). */
const DEPRECATION_HEADERS = {
  deprecation: '@1767225600',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  link: '<http://localhost:80/v1/pets>; rel="successor-version", <http://localhost:80/docs#tag/animals/GET/pets/%7BpetId%7D>; rel="deprecation"; type="text/html"'
}

const UNAUTHORIZED = 'A valid API key is required: send Authorization: Bearer <key>.'
const GONE = 'getPet was removed on Thu, 05 Dec 2030 00:00:00 GMT; use GET /pets with the status filter.'
const BAD_ID = 'Invalid request: path.petId must be an integer (int64).'
const BAD_ID_DETAILS = [{ field: 'path.petId', message: 'must be an integer (int64)' }]

function deprecationHeadersOf (headers: Record<string, unknown>) {
  return { deprecation: headers.deprecation, sunset: headers.sunset, link: headers.link }
}

describe('getPet', () => {
  test('replies 200 with the whole Pet', async (t) => {
    const api = await buildTestApp(t)
    const pet = await postPet(api, { name: 'Rex', categoryId: 7, status: 'pending' })
    const res = await api.inject({ url: `/v1/pets/${pet.id}`, headers: api.auth })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { id: pet.id, name: 'Rex', categoryId: 7, status: 'pending' })
  })

  test('replies 404 not_found for an id never assigned', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ url: `/v1/pets/${NEVER_ASSIGNED}`, headers: api.auth })
    assertError(res, 404, 'not_found', `No pet has id ${NEVER_ASSIGNED}.`)
  })

  test('replies 400 invalid_request for a petId that is not an integer', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ url: '/v1/pets/rex', headers: api.auth })
    assertError(res, 400, 'invalid_request', BAD_ID, { details: BAD_ID_DETAILS })
  })

  describe('carries Deprecation, Sunset and Link on every response', () => {
    const responses: Array<{ response: string, path: (id: number) => string, method?: 'HEAD', authorization?: string, status: number, error?: { code: ErrorCode, message: string, details?: ErrorDetails } }> = [
      { response: '200 found', path: (id) => `/v1/pets/${id}`, status: 200 },
      { response: '200 to HEAD', path: (id) => `/v1/pets/${id}`, method: 'HEAD', status: 200 },
      { response: '404 unknown id', path: () => `/v1/pets/${NEVER_ASSIGNED}`, status: 404, error: { code: 'not_found', message: `No pet has id ${NEVER_ASSIGNED}.` } },
      { response: '400 bad id', path: () => '/v1/pets/1.5', status: 400, error: { code: 'invalid_request', message: BAD_ID, details: BAD_ID_DETAILS } },
      { response: '401 no key', path: (id) => `/v1/pets/${id}`, authorization: '', status: 401, error: { code: 'unauthorized', message: UNAUTHORIZED } },
      { response: '401 unknown key', path: (id) => `/v1/pets/${id}`, authorization: 'Bearer psk_0000000000000000000000000000000000000000000', status: 401, error: { code: 'unauthorized', message: UNAUTHORIZED } }
    ]
    for (const { response, path, method, authorization, status, error } of responses) {
      test(response, async (t) => {
        const api = await buildTestApp(t)
        const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
        const headers = authorization === undefined ? api.auth : authorization === '' ? {} : { authorization }
        const res = await api.inject({ method: method ?? 'GET', url: path(pet.id), headers })
        assert.equal(res.statusCode, status)
        assert.deepEqual(deprecationHeadersOf(res.headers), DEPRECATION_HEADERS)
        if (method === 'HEAD') assert.equal(res.body, '')
        else if (error) assertError(res, status, error.code, error.message, { details: error.details })
        else assert.deepEqual(res.json(), pet)
      })
    }
  })

  test('links to the successor and the notice on PUBLIC_URL', async (t) => {
    const api = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.example.com/v1' } })
    const res = await api.inject({ url: `/v1/pets/${NEVER_ASSIGNED}`, headers: api.auth })
    assert.equal(res.headers.link, '<https://api.example.com/v1/pets>; rel="successor-version", <https://api.example.com/docs#tag/animals/GET/pets/%7BpetId%7D>; rel="deprecation"; type="text/html"')
  })

  test('links only to URIs: each target is an RFC 3986 URI, so the braces of {petId} are percent-encoded', async (t) => {
    const isUri = fullFormats.uri as (text: string) => boolean
    const envs: Array<Record<string, string>> = [{}, { PUBLIC_URL: 'https://api.example.com/v1' }]
    for (const env of envs) {
      const api = await buildTestApp(t, { env })
      const link = String((await api.inject({ url: `/v1/pets/${NEVER_ASSIGNED}`, headers: api.auth })).headers.link)
      assert.doesNotMatch(link, /[{}]/)
      const targets = [...link.matchAll(/<([^>]*)>/g)].map((match) => match[1]!)
      assert.equal(targets.length, 2, link)
      for (const target of targets) assert.ok(isUri(target), `not an RFC 3986 URI: ${target}`)
    }
  })

  test('replies until the instant before the sunset and 410 gone from that instant on', async (t) => {
    let clock = SUNSET - 1
    const api = await buildTestApp(t, { now: () => clock })
    const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
    const before = await api.inject({ url: `/v1/pets/${pet.id}`, headers: api.auth })
    assert.equal(before.statusCode, 200)
    for (const at of [SUNSET, SUNSET + 365 * 86_400_000]) {
      clock = at
      for (const path of [`/v1/pets/${pet.id}`, `/v1/pets/${NEVER_ASSIGNED}`, '/v1/pets/rex']) {
        const res = await api.inject({ url: path, headers: api.auth })
        assertError(res, 410, 'gone', GONE, { label: `${path} at ${new Date(at).toISOString()}` })
        assert.deepEqual(deprecationHeadersOf(res.headers), DEPRECATION_HEADERS)
      }
    }
    const unauthenticated = await api.inject({ url: `/v1/pets/${pet.id}` })
    assert.equal(unauthenticated.statusCode, 401, 'authentication still comes first')
    const list = await api.inject({ url: '/v1/pets', headers: api.auth })
    assert.deepEqual(list.json(), [pet], 'the successor stays')
  })

  test('takes its sunset and deprecation instants from SUNSET_DATE and DEPRECATION_DATE', async (t) => {
    const sunset = Date.parse('2027-03-01T12:00:00Z')
    let clock = sunset - 1
    const api = await buildTestApp(t, { now: () => clock, env: { SUNSET_DATE: '2027-03-01T12:00:00Z', DEPRECATION_DATE: '2025-06-30T00:00:00Z' } })
    const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
    const before = await api.inject({ url: `/v1/pets/${pet.id}`, headers: api.auth })
    assert.equal(before.statusCode, 200)
    assert.equal(before.headers.sunset, 'Mon, 01 Mar 2027 12:00:00 GMT')
    assert.equal(before.headers.deprecation, `@${Date.parse('2025-06-30T00:00:00Z') / 1000}`)
    clock = sunset
    assert.equal((await api.inject({ url: `/v1/pets/${pet.id}`, headers: api.auth })).statusCode, 410)
  })
})
