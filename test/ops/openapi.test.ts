import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import Fastify from 'fastify'
import { describeRoutes, documentText } from '../../src/ops/openapi-generator.ts'
import { buildTestApp, openapiDocument, validateResponse } from '../helpers/app.ts'

const COMMITTED = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')

test('the committed openapi.json is, byte for byte, the document the routes describe (npm run openapi rewrites it)', async (t) => {
  const { app } = await buildTestApp(t, { describeRoutes: true })
  await app.ready()
  assert.equal(documentText(app), COMMITTED)
})

test('the bearer scheme says which operations a read key and a write key may call, from the scope each route declares', async (t) => {
  const scopesSaid = async (routes: Array<[operationId: string, scope: 'read' | 'write']>) => {
    const app = Fastify()
    t.after(() => app.close())
    await app.register(describeRoutes)
    for (const [operationId, scope] of routes) app.post(`/v1/${operationId}`, { schema: { operationId }, config: { scope } }, async () => ({}))
    await app.ready()
    const { description } = (app.swagger() as unknown as { components: { securitySchemes: { bearerAuth: { description: string } } } }).components.securitySchemes.bearerAuth
    return /\(`--scope`\): (.*?)\. Send exactly one/.exec(description)?.[1]
  }
  assert.equal(await scopesSaid([['listPets', 'read'], ['createPet', 'write'], ['getPet', 'read']]),
    'a read key may call listPets and getPet, and gets 403 `forbidden` from createPet; a write key may call all three')
  assert.equal(await scopesSaid([['listPets', 'read'], ['createPet', 'write'], ['getPet', 'read'], ['updatePet', 'write']]),
    'a read key may call listPets and getPet, and gets 403 `forbidden` from createPet and updatePet; a write key may call all four')
  assert.equal(await scopesSaid([['listPets', 'read'], ['getPet', 'read']]), 'a read key may call listPets and getPet; a write key may call both')
})

test('GET /v1/openapi.json serves the committed document as it is, without a key', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(res.body, COMMITTED)
})

test('the committed document lists this server, then production and staging as server variables with placeholder defaults', () => {
  assert.deepEqual(openapiDocument.servers, [
    { url: '/v1', description: 'This server (local, staging or production): the deployment that served this document, relative to it', 'x-internal': false },
    { url: '{base_url}', description: "Production; base_url is the deployment's PUBLIC_URL, including /v1", 'x-internal': false, variables: { base_url: { default: 'https://petstore.example.com/v1' } } },
    { url: '{staging_url}', description: "Staging; staging_url is the deployment's STAGING_URL, including /v1", 'x-internal': false, variables: { staging_url: { default: 'https://staging.petstore.example.com/v1' } } }
  ])
})

test('under PUBLIC_URL and STAGING_URL the served document has them as the server variables\' defaults, keeps the int64 bounds exact, and is otherwise the committed one', async (t) => {
  const { app } = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.example.com/v1/', STAGING_URL: 'https://staging-api.example.com/v1' } })
  const res = await app.inject({ url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  const [local, production, staging] = openapiDocument.servers
  assert.deepEqual(JSON.parse(res.body), {
    ...openapiDocument,
    servers: [
      local,
      { ...production, variables: { base_url: { default: 'https://api.example.com/v1' } } },
      { ...staging, variables: { staging_url: { default: 'https://staging-api.example.com/v1' } } }
    ]
  })
  const bounds = (text: string) => text.match(/"(minimum|maximum)": -?\d{19}\b/g)
  assert.ok((bounds(COMMITTED) ?? []).length > 0)
  assert.deepEqual(bounds(res.body), bounds(COMMITTED))
})

test('under STAGING_URL alone only the staging default changes', async (t) => {
  const { app } = await buildTestApp(t, { env: { STAGING_URL: 'https://staging-api.example.com/v1' } })
  const served = JSON.parse((await app.inject({ url: '/v1/openapi.json' })).body)
  assert.deepEqual(served.servers.map((server: { variables?: Record<string, { default: string }> }) => Object.values(server.variables ?? {}).map((variable) => variable.default)),
    [[], ['https://petstore.example.com/v1'], ['https://staging-api.example.com/v1']])
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

test('the response checker holds a HEAD response to the statuses its GET operation documents, and to an empty body', () => {
  const head = (url: string, status: number, body = '') => validateResponse({ method: 'HEAD', url, status, body })
  assert.deepEqual(head('/v1/pets', 200), [])
  assert.deepEqual(head('/v1/pets/7', 404), [], 'getPet documents 404')
  assert.deepEqual(head('/v1/pets', 404), ['HEAD /pets has no documented 404 response'], 'listPets does not')
  assert.deepEqual(head('/v1/pets/7', 201), ['HEAD /pets/{petId} has no documented 201 response'], 'a status only createPet documents')
  assert.deepEqual(head('/v1/elsewhere', 200), ['HEAD /v1/elsewhere → 200: not an operation of the document'])
  assert.deepEqual(head('/v1/elsewhere', 404), [], 'an unknown path may get an error')
  assert.deepEqual(head('/v1/pets', 200, '[]'), ['HEAD /v1/pets → 200: HEAD response has a body'])
})

/** Every schema in the document, with the JSON pointer it sits at. */
function schemasIn (node: unknown, at = ''): Array<[string, Record<string, unknown>]> {
  if (typeof node !== 'object' || node === null) return []
  const here: Array<[string, Record<string, unknown>]> = Array.isArray(node) ? [] : [[at, node as Record<string, unknown>]]
  return here.concat(Object.entries(node).flatMap(([key, child]) => schemasIn(child, `${at}/${key}`)))
}

test('every enum of the document says it holds strings, and the status query parameter names PetStatus', () => {
  const enums = schemasIn(openapiDocument).filter(([, schema]) => Array.isArray(schema.enum))
  assert.deepEqual(enums.filter(([, schema]) => schema.type !== 'string').map(([at]) => at), [])
  assert.deepEqual(enums.map(([at]) => at).filter((at) => at.startsWith('/components')), ['/components/schemas/PetStatus', '/components/schemas/Error/properties/code'])
  const status = openapiDocument.paths['/pets'].get.parameters.find((parameter: { name: string }) => parameter.name === 'status')
  assert.deepEqual(status, { schema: { $ref: '#/components/schemas/PetStatus' }, in: 'query', name: 'status', required: false, description: 'Only animals with this status are listed.' })
})

test('every int64 of the document warns JavaScript clients that a number loses it', () => {
  // A parameter carries the description, its schema the format.
  const int64s = schemasIn(openapiDocument).filter(([at, schema]) => (schema.format === 'int64' && !at.endsWith('/schema')) || (schema.schema as { format?: string } | undefined)?.format === 'int64')
  assert.deepEqual(int64s.map(([at]) => at), [
    '/components/schemas/NewPet/properties/categoryId',
    '/components/schemas/Pet/properties/id',
    '/components/schemas/Pet/properties/categoryId',
    '/paths//pets/{petId}/get/parameters/0'
  ])
  for (const [at, schema] of int64s) {
    assert.match(String(schema.description), /JavaScript clients: .* use a lossless JSON parser or the project's client \(@petstore\/client\)/, at)
  }
})

test("createPet's Idempotency-Key parameter carries no example, so the docs page pre-fills no fixed key, and says to make a fresh one per create", () => {
  const parameters = openapiDocument.paths['/pets'].post.parameters as Array<Record<string, unknown>>
  const idempotencyKey = parameters.find((parameter) => parameter.name === 'Idempotency-Key')
  assert.ok(idempotencyKey)
  const { description, ...rest } = idempotencyKey
  assert.deepEqual(rest, {
    schema: { type: 'string', pattern: '^(?:[!#-~][!-~]{0,254}|"(?:[!#-\\[\\]-~]|\\\\["\\\\]){1,255}")$', maxLength: 512 },
    in: 'header',
    name: 'Idempotency-Key',
    required: false
  })
  assert.match(String(description), /Make a fresh key for each new animal, such as a new random UUID \(`crypto\.randomUUID\(\)`\), and send it again only to retry that same create\.$/)
})
