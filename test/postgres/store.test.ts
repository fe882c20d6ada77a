import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { INT64_MAX, INT64_MIN } from '../../src/contract/schemas.ts'
import { openStore } from '../../src/store/index.ts'
import { PET_INSERT_LOCK } from '../../src/store/postgres/writes.ts'
import { TEST_AUDIT } from '../helpers/app.ts'
import { freshSchema } from '../helpers/pg-schema.ts'

async function migratedStore (t: Parameters<typeof freshSchema>[0]) {
  const { schema, url } = freshSchema(t)
  const store = await openStore(url)
  t.after(() => store.close())
  await store.migrate()
  return { schema, url, store }
}

test('categoryId and id round-trip exactly at the int64 edges, even with a global int8 parser to number', async (t) => {
  // Another library in the process may turn int8 into a lossy number; the adapter must not care.
  const previous = pg.types.getTypeParser(20)
  pg.types.setTypeParser(20, (text: string) => Number(text))
  t.after(() => pg.types.setTypeParser(20, previous))
  const { store } = await migratedStore(t)

  const created = []
  for (const categoryId of [INT64_MAX, INT64_MIN, INT64_MAX - 1n, 2n ** 53n + 1n, 0n, -1n]) {
    created.push(await store.createPet({ name: `c${categoryId}`, categoryId }))
  }
  const expected = [INT64_MAX, INT64_MIN, INT64_MAX - 1n, 2n ** 53n + 1n, 0n, -1n].map((categoryId, i) => ({ id: BigInt(i + 1), name: `c${categoryId}`, categoryId }))
  assert.deepEqual(created, expected)
  assert.deepEqual(await store.listPets({ limit: 10 }), expected)
  assert.deepEqual(await store.getPet(1n), expected[0])
})

test('ids near the top of int64 come back exactly, and an id is never reused after its row is gone', async (t) => {
  const { schema, url, store } = await migratedStore(t)
  const admin = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await admin.connect()
  t.after(() => admin.end())
  await admin.query(`ALTER TABLE ${schema}.pets ALTER COLUMN id RESTART WITH 9223372036854775800`)

  const first = await store.createPet({ name: 'high', categoryId: 1n, status: 'sold' })
  assert.deepEqual(first, { id: 9223372036854775800n, name: 'high', categoryId: 1n, status: 'sold' })
  await admin.query(`DELETE FROM ${schema}.pets`)
  const second = await store.createPet({ name: 'next', categoryId: 2n })
  assert.deepEqual(second, { id: 9223372036854775801n, name: 'next', categoryId: 2n })
  assert.deepEqual(await store.getPet(9223372036854775801n), second)
  assert.equal(await store.getPet(9223372036854775800n), undefined)
})

test('keyset pages by status walk every match once in id order', async (t) => {
  const { store } = await migratedStore(t)
  const statuses = ['available', 'sold', undefined, 'available', 'pending', 'available'] as const
  for (const [i, status] of statuses.entries()) await store.createPet({ name: `p${i}`, categoryId: BigInt(i), ...(status ? { status } : {}) })

  const firstPage = await store.listPets({ limit: 2, status: 'available' })
  assert.deepEqual(firstPage.map((pet) => pet.id), [1n, 4n])
  assert.deepEqual(await store.listPets({ limit: 2, status: 'available', afterId: 4n }), [{ id: 6n, name: 'p5', categoryId: 5n, status: 'available' }])
  assert.deepEqual((await store.listPets({ limit: 10, afterId: 2n })).map((pet) => pet.id), [3n, 4n, 5n, 6n])
  assert.deepEqual(await store.getPet(3n), { id: 3n, name: 'p2', categoryId: 2n })
  assert.equal(await store.countPets(), 6)
})

test('API keys: created, found by hash, touched and revoked with the first revocation time kept', async (t) => {
  const { store } = await migratedStore(t)
  const created = await store.createApiKey({ name: 'k', prefix: 'psk_abcdefgh', hash: 'a'.repeat(64), expiresAt: '2031-01-02T03:04:05.678Z' }, TEST_AUDIT)
  assert.deepEqual(created, { id: 1, name: 'k', prefix: 'psk_abcdefgh', scope: 'write', createdAt: created.createdAt, lastUsedAt: null, revokedAt: null, expiresAt: '2031-01-02T03:04:05.678Z', lineageId: 1, rotatedFrom: null })
  assert.match(created.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

  await store.touchApiKey(1, '2030-05-06T07:08:09.010Z')
  const revoked = await store.revokeApiKey(1, TEST_AUDIT)
  assert.equal(revoked.outcome, 'revoked')
  const revokedAt = (await store.findApiKeyByHash('a'.repeat(64)))!.revokedAt
  const stored = { ...created, lastUsedAt: '2030-05-06T07:08:09.010Z', revokedAt }
  assert.deepEqual(await store.revokeApiKey(1, TEST_AUDIT), { outcome: 'already_revoked', key: stored })
  assert.deepEqual(await store.revokeApiKey(2, TEST_AUDIT), { outcome: 'not_found' })
  assert.deepEqual(await store.listApiKeys(), [stored])
  assert.equal(await store.findApiKeyByHash('b'.repeat(64)), undefined)
  assert.equal(await store.countApiKeys(), 1)
})

test('pets commit in id order: a create waits while another writer holds an earlier id, so no page can skip it', async (t) => {
  const { schema, url, store } = await migratedStore(t)
  const writer = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await writer.connect()
  t.after(() => writer.end())
  // A writer of the service's kind: takes the pet insert lock, draws an id, does not commit yet.
  await writer.query('BEGIN')
  await writer.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PET_INSERT_LOCK, schema])
  const { rows } = await writer.query(`INSERT INTO ${schema}.pets (name, category_id) VALUES ('early', 1) RETURNING id`)
  const earlyId = BigInt(rows[0].id)

  let settled = false
  const late = store.createPet({ name: 'late', categoryId: 2n }).finally(() => { settled = true })
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal(settled, false, 'the later create must not commit before the earlier id')
  assert.deepEqual(await store.listPets({ limit: 10 }), [], 'nothing is visible while the earlier id is in flight')

  await writer.query('COMMIT')
  const created = await late
  assert.ok(created.id > earlyId)
  assert.deepEqual(await store.listPets({ limit: 10 }), [
    { id: earlyId, name: 'early', categoryId: 1n },
    { id: created.id, name: 'late', categoryId: 2n }
  ])
})

test('creates that arrive together are written in one batch and get increasing ids in the order they were asked', async (t) => {
  const { store } = await migratedStore(t)
  const pets = await Promise.all(Array.from({ length: 50 }, (_, i) => store.createPet({ name: `p${i}`, categoryId: BigInt(i) })))
  assert.deepEqual(pets.map((pet) => pet.name), Array.from({ length: 50 }, (_, i) => `p${i}`))
  assert.deepEqual(pets.map((pet) => pet.categoryId), Array.from({ length: 50 }, (_, i) => BigInt(i)))
  for (let i = 1; i < pets.length; i++) assert.ok(pets[i]!.id > pets[i - 1]!.id)
  assert.deepEqual(await store.listPets({ limit: 100 }), pets)
})
