import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { postPet } from '../helpers/api-steps.ts'
import { buildTestApp, json, type TestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { runCli } from '../helpers/processes.ts'

/**
 * Read keys (keys create --scope read): they list and get animals; createPet gives them 403
 * forbidden, after the key is checked and before the body is looked at.
 */

const FORBIDDEN = 'This API key is read-only: it may list and get animals but not add them; use a key with the write scope.'
const UNAUTHORIZED = 'A valid API key is required: send Authorization: Bearer <key>.'
const RATE_LIMIT = /^"default";r=\d+;t=\d+$/

/** A key issued by the CLI on the app's database, with its record as keys create --json prints it. */
async function createKeyWithCli (api: TestApp, name: string, scopeArgs: string[]) {
  const created = await runCli(['keys', 'create', '--name', name, ...scopeArgs, '--json'], { DATABASE_URL: api.url })
  assert.equal(created.code, 0, created.stderr)
  const { key, ...record } = JSON.parse(created.stdout)
  return { key: String(key), record, auth: { authorization: `Bearer ${key}` } }
}

test('a read key lists and gets with 200; its createPet is 403 forbidden with the rate-limit fields, and nothing is stored', async (t) => {
  const api = await buildTestApp(t)
  const pet = await postPet(api, { name: 'Rex', categoryId: 7, status: 'available' })
  const read = await createKeyWithCli(api, 'dashboard', ['--scope', 'read'])
  assert.deepEqual(read.record, {
    id: read.record.id,
    name: 'dashboard',
    prefix: read.key.slice(0, 12),
    scope: 'read',
    createdAt: read.record.createdAt,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    lineageId: read.record.id,
    rotatedFrom: null
  })

  const listed = await api.inject({ url: '/v1/pets', headers: read.auth })
  assert.equal(listed.statusCode, 200, listed.body)
  assert.deepEqual(listed.json(), [pet])
  const got = await api.inject({ url: `/v1/pets/${pet.id}`, headers: read.auth })
  assert.equal(got.statusCode, 200, got.body)
  assert.deepEqual(got.json(), pet)

  const refused = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...read.auth, ...json }, payload: '{"name":"Tom","categoryId":8}' })
  assertError(refused, 403, 'forbidden', FORBIDDEN)
  assert.equal(refused.headers['ratelimit-policy'], '"default";q=1000;w=60')
  assert.match(String(refused.headers.ratelimit), RATE_LIMIT)
  assert.equal(refused.headers['www-authenticate'], undefined, 'the key was accepted: no challenge')
  assert.deepEqual(await api.store.listPets({ limit: 10 }), [{ id: BigInt(pet.id), name: 'Rex', categoryId: 7n, status: 'available' }])
})

test('keys create makes write keys by default and with --scope write: both create with 201', async (t) => {
  const api = await buildTestApp(t)
  for (const scopeArgs of [[], ['--scope', 'write']]) {
    const write = await createKeyWithCli(api, 'writer', scopeArgs)
    assert.equal(write.record.scope, 'write', scopeArgs.join(' '))
    const created = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...write.auth, ...json }, payload: '{"name":"Tom","categoryId":8}' })
    assert.equal(created.statusCode, 201, created.body)
  }
  assert.equal(await api.store.countPets(), 2)
})

test('a read key gets 403, not 400, 413 or 415, whatever its body; without a valid key it is still 401 first', async (t) => {
  const api = await buildTestApp(t)
  const read = await createKeyWithCli(api, 'dashboard', ['--scope', 'read'])
  const BAD_BODIES: Array<{ body: string, options: InjectOptions }> = [
    { body: 'malformed JSON', options: { headers: json, payload: '{"name":' } },
    { body: 'a body missing fields', options: { headers: json, payload: '{}' } },
    { body: 'a body of the wrong type', options: { headers: { 'content-type': 'text/plain' }, payload: 'Rex' } },
    { body: 'a body of 2 MiB', options: { headers: json, payload: `{"name":"${'x'.repeat(2 * 1024 * 1024)}","categoryId":7}` } },
    { body: 'a malformed Idempotency-Key', options: { headers: { ...json, 'idempotency-key': '' }, payload: '{"name":"Tom","categoryId":8}' } }
  ]
  for (const { body, options } of BAD_BODIES) {
    const send = (authorization?: string) => api.inject({
      method: 'POST', url: '/v1/pets', payload: options.payload, headers: { ...options.headers as Record<string, string>, ...(authorization ? { authorization } : {}) }
    })
    const asRead = await send(read.auth.authorization)
    assertError(asRead, 403, 'forbidden', FORBIDDEN, { label: body })
    for (const authorization of [undefined, 'Bearer not-a-key']) {
      const anonymous = await send(authorization)
      assertError(anonymous, 401, 'unauthorized', UNAUTHORIZED, { label: `${body}, ${authorization ?? 'no key'}` })
    }
  }
  assert.equal(await api.store.countPets(), 0)
})

test('keys rotate keeps the scope: the successor of a read key is a read key, listed as such', async (t) => {
  const api = await buildTestApp(t)
  const read = await createKeyWithCli(api, 'dashboard', ['--scope', 'read'])
  const rotated = await runCli(['keys', 'rotate', String(read.record.id), '--json'], { DATABASE_URL: api.url })
  assert.equal(rotated.code, 0, rotated.stderr)
  const successor = JSON.parse(rotated.stdout)
  assert.equal(successor.scope, 'read')
  assert.equal(successor.old.scope, 'read')
  const auth = { authorization: `Bearer ${successor.key}` }
  assert.equal((await api.inject({ url: '/v1/pets', headers: auth })).statusCode, 200)
  const refused = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...auth, ...json }, payload: '{"name":"Tom","categoryId":8}' })
  assertError(refused, 403, 'forbidden', FORBIDDEN)

  const listed = await runCli(['keys', 'list', '--json'], { DATABASE_URL: api.url })
  assert.deepEqual(JSON.parse(listed.stdout).map(({ id, scope }: { id: number, scope: string }) => ({ id, scope })), [
    { id: api.keyId, scope: 'write' },
    { id: read.record.id, scope: 'read' },
    { id: successor.id, scope: 'read' }
  ])
})
