import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { buildTestApp, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

/**
 * No response quotes more than 200 characters of what the client sent: a 9 000-character path,
 * query value, header or body field comes back cut, if at all.
 */

const LONG = 'Q'.repeat(9000)
const TOO_MUCH = 'Q'.repeat(201)

test('a 404 names the path with at most 200 characters of it, cut with an ellipsis', async (t) => {
  const api = await buildTestApp(t)
  for (const path of [`/${LONG}`, `/v1/${LONG}`, `/docs/${LONG}`]) {
    const res = await api.inject({ url: `${path}?q=${LONG}` })
    assertError(res, 404, 'not_found', `No route for GET ${path.slice(0, 199)}….`)
  }
  const short = await api.inject({ method: 'DELETE', url: `/${'Q'.repeat(199)}` })
  assertError(short, 404, 'not_found', `No route for DELETE /${'Q'.repeat(199)}.`, { label: '200 characters are quoted whole' })
})

test('no error response quotes more than 200 characters of a long path, query value, header or body field', async (t) => {
  const api = await buildTestApp(t)
  const requests: InjectOptions[] = [
    { url: `/v1/${LONG}` },
    { method: 'HEAD', url: `/docs/${LONG}` },
    { url: `/v1/pets/${LONG}`, headers: api.auth },
    { url: `/v1/pets/1${LONG}`, headers: api.auth },
    { url: `/v1/pets?limit=${LONG}`, headers: api.auth },
    { url: `/v1/pets?status=${LONG}`, headers: api.auth },
    { url: `/v1/pets?cursor=${LONG}`, headers: api.auth },
    { url: `/v1/pets?limit=1&limit=${LONG}`, headers: api.auth },
    { url: '/v1/pets', headers: { authorization: `Bearer ${LONG}` } },
    { url: '/v1/pets', headers: { authorization: `${LONG} ${LONG}` } },
    { method: 'PUT', url: '/v1/openapi.json', headers: json, payload: '{}' },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":"${LONG}","categoryId":7}` },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":"Rex","categoryId":${'9'.repeat(9000)}}` },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":"Rex","categoryId":7,"status":"${LONG}"}` },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"${LONG}":1}` },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":${LONG}}` },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: LONG },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json, 'idempotency-key': LONG }, payload: '{"name":"Rex","categoryId":7}' },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': LONG }, payload: '{}' },
    { method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': `text/${LONG}` }, payload: '{}' }
  ]
  for (const request of requests) {
    const res = await api.inject(request)
    const label = `${request.method ?? 'GET'} ${String(request.url).slice(0, 30)} → ${res.statusCode}`
    assert.ok(res.statusCode >= 400, label)
    assert.ok(!res.body.includes(TOO_MUCH), `${label} quotes more than 200 characters: ${res.body.slice(0, 300)}`)
  }
  assert.equal(await api.store.countPets(), 0)
})
