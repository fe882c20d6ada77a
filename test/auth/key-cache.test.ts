import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openStore } from '../../src/store/index.ts'
import { buildTestApp, createTestStore, issueKey, json, TEST_AUDIT } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

/**
 * On SQLite the key cache is exact: it trusts a cached key until the store's key version moves.
 * That version must move for every change to a key's validity made anywhere (this connection,
 * the CLI, another process), and must not move for pet commits, which the pet writer makes on
 * a connection of its own: otherwise every create would send the next request's key back to
 * the store.
 */
test('the key version moves when a key changes on any connection, and not for pets or last-used times', async (t) => {
  const { url, store, cleanup } = await createTestStore()
  t.after(cleanup)
  const other = await openStore(url)
  t.after(() => other.close())
  const key = await issueKey(store, 'watched')
  const version = () => store.keyVersion!()

  const start = version()
  await store.createPet({ name: 'rex', categoryId: 1n })
  await other.createPet({ name: 'tom', categoryId: 2n })
  await other.touchApiKey(key.id, '2026-11-23T00:00:00.000Z')
  assert.equal(version(), start, 'pet commits and touches are not key changes')

  assert.equal((await other.revokeApiKey(key.id, TEST_AUDIT)).outcome, 'revoked')
  const afterRevoke = version()
  assert.notEqual(afterRevoke, start, 'a revocation on another connection')

  const second = await issueKey(store, 'second')
  await other.rotateApiKey(second.id, { name: 'second', hash: 'f'.repeat(64), prefix: 'psk_second__' }, '2031-01-01T00:00:00.000Z', new Date().toISOString(), TEST_AUDIT)
  const afterRotate = version()
  assert.notEqual(afterRotate, afterRevoke, 'a rotation on another connection')

  await store.revokeApiKey(second.id, TEST_AUDIT)
  assert.notEqual(version(), afterRotate, 'a revocation on this connection')
})

test('creates do not send a cached key back to the store, and a revocation by another process is seen on the next request', async (t) => {
  const lookups: string[] = []
  let clock = Date.now()
  const api = await buildTestApp(t, { now: () => clock, faults: { beforeStoreCall: (operation) => { if (operation === 'findApiKeyByHash') lookups.push(operation) } } })
  assert.equal((await api.inject({ url: '/v1/pets', headers: api.auth })).statusCode, 200)
  assert.deepEqual(lookups, ['findApiKeyByHash'])

  for (let i = 0; i < 5; i++) {
    clock += 1
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: { name: `pet-${i}`, categoryId: i } })
    assert.equal(res.statusCode, 201, res.body)
  }
  clock += 1
  assert.equal((await api.inject({ url: '/v1/pets', headers: api.auth })).statusCode, 200)
  assert.deepEqual(lookups, ['findApiKeyByHash'], 'the key was not looked up again after the creates')

  // As `petstore keys revoke` does: its own process, its own connection.
  const cli = await openStore(api.url)
  t.after(() => cli.close())
  assert.equal((await cli.revokeApiKey(api.keyId, TEST_AUDIT)).outcome, 'revoked')
  clock += 1
  const refused = await api.inject({ url: '/v1/pets', headers: api.auth })
  assertError(refused, 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')
  assert.deepEqual(lookups, ['findApiKeyByHash', 'findApiKeyByHash'])
})
