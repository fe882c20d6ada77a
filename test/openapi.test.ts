import assert from 'node:assert/strict'
import { test } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { buildTestApp, openapiDocument, validateResponse } from './helpers.ts'

test('the served OpenAPI document equals the committed openapi.json (npm run openapi rewrites it)', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(JSON.parse(res.body), openapiDocument)
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
