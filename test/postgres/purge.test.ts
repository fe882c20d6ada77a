import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { PURGE_SLICE, purgeExpiredRecords } from '../../src/pets/idempotency.ts'
import { openStore } from '../../src/store/index.ts'
import type { Store } from '../../src/store/types.ts'
import { issueKey } from '../helpers/app.ts'
import { freshSchema } from '../helpers/pg-schema.ts'

const NOW = '2027-03-02T00:00:00.000Z'
// Ten full slices and a half one.
const EXPIRED = 10.5 * PURGE_SLICE

test('the purge removes every expired record in slices of bounded size, each its own statement, and keeps live ones', async (t) => {
  const { schema, url } = freshSchema(t)
  const store = await openStore(url)
  t.after(() => store.close())
  await store.migrate()
  const { id: keyId } = await issueKey(store)
  const pet = await store.createPet({ name: 'Rex', categoryId: 7n })
  const admin = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await admin.connect()
  t.after(() => admin.end())
  const insert = (count: number, prefix: string, expiresAt: string) => admin.query(`INSERT INTO ${schema}.idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at)
    SELECT $1, $2 || lpad(i::text, 5, '0'), 'fingerprint', $3, '2027-03-01T00:00:00Z', $4 FROM generate_series(1, $5) AS i`, [keyId, prefix, pet.id.toString(), expiresAt, count])
  await insert(EXPIRED - 1, 'expired-', '2027-03-01T12:00:00Z')
  await insert(1, 'expires-now-', NOW)
  await insert(100, 'live-', '2027-03-02T00:00:00.001Z')

  const slices: number[] = []
  const counting: Store = Object.create(store, {
    deleteExpiredIdempotencyRecords: {
      value: async (now: string, limit: number) => {
        const deleted = await store.deleteExpiredIdempotencyRecords(now, limit)
        slices.push(deleted)
        return deleted
      }
    }
  })
  const deleted = await purgeExpiredRecords(counting, NOW)

  const { rows } = await admin.query<{ idempotency_key: string }>(`SELECT idempotency_key FROM ${schema}.idempotency_records ORDER BY idempotency_key`)
  assert.deepEqual({ deleted, slices, left: rows.map((row) => row.idempotency_key) }, {
    deleted: EXPIRED,
    slices: [...Array<number>(10).fill(PURGE_SLICE), PURGE_SLICE / 2],
    left: Array.from({ length: 100 }, (_, i) => `live-${String(i + 1).padStart(5, '0')}`)
  })
})
