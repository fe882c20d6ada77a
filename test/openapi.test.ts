import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { documentText } from '../src/ops/openapi-generator.ts'
import { buildTestApp, openapiDocument, validateResponse } from './helpers.ts'

const COMMITTED = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')

test('the committed openapi.json is, byte for byte, the document the routes describe (npm run openapi rewrites it)', async (t) => {
  const { app } = await buildTestApp(t, { describeRoutes: true })
  await app.ready()
  assert.equal(documentText(app), COMMITTED)
})

test('GET /v1/openapi.json serves the committed document as it is, without a key', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(res.body, COMMITTED)
})

test('under PUBLIC_URL the served document names it as its one server, keeps the int64 bounds exact, and is otherwise the committed one', async (t) => {
  const { app } = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.example.com/v1' } })
  const res = await app.inject({ url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(JSON.parse(res.body), {
    ...openapiDocument,
    servers: [{ url: 'https://api.example.com/v1', description: 'This deployment (production, staging or local, as PUBLIC_URL says)', 'x-internal': false }]
  })
  const bounds = (text: string) => text.match(/"(minimum|maximum)": -?\d{19}\b/g)
  assert.ok((bounds(COMMITTED) ?? []).length > 0)
  assert.deepEqual(bounds(res.body), bounds(COMMITTED))
})

test('openapi.json is a valid OpenAPI 3.1 document with the three operations of the interface', async () => {
  const document = structuredClone(openapiDocument)
  await SwaggerParser.validate(document)
  const operations = Object.entries(openapiDocument.paths as Record<string, Record<string, { operationId: string, tags: string[], deprecated?: boolean, security: unknown }>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, id: op.operationId, tags: op.tags, deprecated: op.deprecated ?? false, security: op.security })))
  assert.deepEqual(operations, [
    { path: '/pets', method: 'get', id: 'listPets', tags: ['animals'], deprecated: false, security: [{ bearerAuth: [] }] },
    { path: '/pets', method: 'post', id: 'createPet', tags: ['animals'], deprecated: false, security: [{ bearerAuth: [] }] },
    { path: '/pets/{petId}', method: 'get', id: 'getPet', tags: ['animals'], deprecated: true, security: [{ bearerAuth: [] }] }
  ])
  assert.equal(openapiDocument.info.version, '1.0.0')
})

test('the answer checker holds a HEAD answer to the statuses its GET operation documents, and to an empty body', () => {
  const head = (url: string, status: number, body = '') => validateResponse({ method: 'HEAD', url, status, body })
  assert.deepEqual(head('/v1/pets', 200), [])
  assert.deepEqual(head('/v1/pets/7', 404), [], 'getPet documents 404')
  assert.deepEqual(head('/v1/pets', 404), ['HEAD /pets has no documented 404 answer'], 'listPets does not')
  assert.deepEqual(head('/v1/pets/7', 201), ['HEAD /pets/{petId} has no documented 201 answer'], 'a status only createPet documents')
  assert.deepEqual(head('/v1/elsewhere', 200), ['HEAD /v1/elsewhere → 200: not an operation of the document'])
  assert.deepEqual(head('/v1/elsewhere', 404), [], 'an unknown path may answer an error')
  assert.deepEqual(head('/v1/pets', 200, '[]'), ['HEAD /v1/pets → 200: HEAD answer has a body'])
})
