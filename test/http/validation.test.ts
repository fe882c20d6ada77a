import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { ConditionalHeadersSchema } from '../../src/contract/schemas.ts'
import { validatorFactory } from '../../src/http/validation.ts'

test('a header schema only checks: the request keeps the headers Node parsed, so reading them copies nothing', async (t) => {
  const app = Fastify({ schemaController: { compilersFactory: { buildValidator: validatorFactory() } } })
  t.after(() => app.close())
  app.get('/', { schema: { headers: ConditionalHeadersSchema } }, async (request) => ({
    // Fastify stores what a header validator hands back as extra headers, and each read of
    // request.headers then merges them into a new object.
    same: request.headers === request.raw.headers,
    ifNoneMatch: request.headers['if-none-match'] ?? null
  }))
  const checked = await app.inject({ url: '/', headers: { 'if-none-match': '"a", W/"b"' } })
  assert.deepEqual([checked.statusCode, checked.json()], [200, { same: true, ifNoneMatch: '"a", W/"b"' }])
  const absent = await app.inject({ url: '/' })
  assert.deepEqual([absent.statusCode, absent.json()], [200, { same: true, ifNoneMatch: null }])
  const refused = await app.inject({ url: '/', headers: { 'if-none-match': 'no tag' } })
  assert.equal(refused.statusCode, 400)
  assert.deepEqual((refused.json() as { message: string }).message.includes('header.if-none-match'), true)
})
