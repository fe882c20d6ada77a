import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { openStore } from '../../src/store/index.ts'
import { TEST_AUDIT } from '../helpers/app.ts'

/**
 * SQLite pets are written by a connection of their own (src/store/sqlite/pet-writer.ts). These tests
 * check what callers rely on: every write resolves only once committed, writes that arrive
 * together commit in the order they were made, and closing the store first finishes the
 * writes already made.
 */
async function fileStore (t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-writer-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const url = `sqlite:${join(dir, 'petstore.db')}`
  const store = await openStore(url)
  await store.migrate()
  return { url, store }
}

test('concurrent creates get ascending ids in call order, and each is readable once it resolves', async (t) => {
  const { store } = await fileStore(t)
  const pets = await Promise.all(Array.from({ length: 300 }, (_, i) => store.createPet({ name: `pet-${i}`, categoryId: BigInt(i), status: 'available' })))
  assert.deepEqual(pets.map((pet) => pet.id), pets.map((_, i) => BigInt(i + 1)))
  assert.deepEqual(pets[299], { id: 300n, name: 'pet-299', categoryId: 299n, status: 'available' })
  assert.deepEqual(await store.getPet(300n), pets[299])
  assert.equal(await store.countPets(), 300)
  await store.close()
})

test('closing the store commits the writes already made before the writer stops', async (t) => {
  const { url, store } = await fileStore(t)
  const writes = Array.from({ length: 50 }, (_, i) => store.createPet({ name: `late-${i}`, categoryId: 1n }))
  await store.close()
  const created = await Promise.all(writes)
  assert.equal(created.length, 50)
  const reopened = await openStore(url)
  t.after(() => reopened.close())
  assert.equal(await reopened.countPets(), 50)
  assert.deepEqual(await reopened.getPet(50n), { id: 50n, name: 'late-49', categoryId: 1n })
})

test('an idempotent create on the pet writer connection replays, conflicts and creates as on the connection itself', async (t) => {
  const { store } = await fileStore(t)
  const claim = { keyLineageId: 1, key: 'k-1', fingerprint: 'f-1', now: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-02T00:00:00.000Z' }
  const key = await store.createApiKey({ name: 'owner', hash: 'h'.repeat(64), prefix: 'psk_owner___' }, TEST_AUDIT)
  const owned = { ...claim, keyLineageId: key.lineageId }
  const [first, second] = await Promise.all([
    store.createPetIdempotently({ name: 'once', categoryId: 9n }, owned),
    store.createPetIdempotently({ name: 'once', categoryId: 9n }, owned)
  ])
  assert.deepEqual(first, { outcome: 'created', pet: { id: 1n, name: 'once', categoryId: 9n } })
  assert.deepEqual(second, { outcome: 'replayed', pet: { id: 1n, name: 'once', categoryId: 9n } })
  assert.deepEqual(await store.createPetIdempotently({ name: 'other', categoryId: 9n }, { ...owned, fingerprint: 'f-2' }), { outcome: 'conflict' })
  assert.equal(await store.countPets(), 1)
  await store.close()
})

test('ids near the top of int64 come back exactly, and an id is never reused after its row is gone', async (t) => {
  const { url, store } = await fileStore(t)
  const admin = new DatabaseSync(url.slice('sqlite:'.length))
  t.after(() => admin.close())
  // AUTOINCREMENT's counter: the next id is one above it.
  admin.exec("INSERT INTO sqlite_sequence (name, seq) VALUES ('pets', 9223372036854775799)")

  const first = await store.createPet({ name: 'high', categoryId: 1n, status: 'sold' })
  assert.deepEqual(first, { id: 9223372036854775800n, name: 'high', categoryId: 1n, status: 'sold' })
  admin.exec('DELETE FROM pets')
  const second = await store.createPet({ name: 'next', categoryId: 2n })
  assert.deepEqual(second, { id: 9223372036854775801n, name: 'next', categoryId: 2n })
  assert.deepEqual(await store.getPet(9223372036854775801n), second)
  assert.equal(await store.getPet(9223372036854775800n), undefined)
  await store.close()
})
