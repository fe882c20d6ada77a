import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { purgeExpiredRecords } from '../../src/pets/idempotency.ts'
import { openStore } from '../../src/store/index.ts'
import { issueKey } from '../helpers/app.ts'
import { tempDir } from '../helpers/processes.ts'

const EXPIRED = 1_000_000
const LIVE = 1000
// One DELETE of a million records holds the event loop for seconds; a slice holds it for
// milliseconds, and the bound leaves room for a busy machine.
const MAX_LAG_MS = 500

const NOW = '2027-03-02T00:00:00.000Z'

test('the purge removes a million expired records in slices: the event loop never waits long, and live records stay', async (t) => {
  const path = `${tempDir(t)}/petstore.db`
  const store = await openStore(`sqlite:${path}`)
  t.after(() => store.close())
  await store.migrate()
  const { id: keyId } = await issueKey(store)
  const pet = await store.createPet({ name: 'Rex', categoryId: 7n })

  const db = new DatabaseSync(path)
  t.after(() => db.close())
  // One transaction, one statement per kind: the test's own set-up should take seconds, not minutes.
  const insert = db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO idempotency_records (api_key_id, idempotency_key, fingerprint, pet_id, created_at, expires_at)
    SELECT ?, printf(?, i), 'fingerprint', ?, '2027-03-01T00:00:00.000Z', ? FROM n`)
  db.exec('BEGIN')
  insert.run(EXPIRED - 1, keyId, 'expired-%07d', pet.id, '2027-03-01T12:00:00.000Z')
  insert.run(1, keyId, 'expires-now-%d', pet.id, NOW)
  insert.run(LIVE, keyId, 'live-%04d', pet.id, '2027-03-02T00:00:00.001Z')
  db.exec('COMMIT')

  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  // The monitor samples on a timer: turns of the loop before and after let it see the purge.
  await sleep(50)
  const deleted = await purgeExpiredRecords(store, NOW)
  await sleep(50)
  lag.disable()

  const left = db.prepare('SELECT idempotency_key FROM idempotency_records ORDER BY idempotency_key').all().map((row) => row.idempotency_key)
  assert.deepEqual({ deleted, left }, { deleted: EXPIRED, left: Array.from({ length: LIVE }, (_, i) => `live-${String(i + 1).padStart(4, '0')}`) })
  const maxLagMs = lag.max / 1e6
  assert.ok(maxLagMs < MAX_LAG_MS, `the event loop waited ${maxLagMs.toFixed(0)} ms at once during the purge (bound ${MAX_LAG_MS} ms)`)
})
