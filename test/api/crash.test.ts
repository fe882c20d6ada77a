import assert from 'node:assert/strict'
import { test } from 'node:test'
import { crashRounds } from '../helpers/crash-rounds.ts'
import { createTestStore, issueKey, STORE_KIND } from '../helpers/app.ts'

test(`SIGKILL under a write load loses no acknowledged create, and retries with Idempotency-Key make each create exactly one pet (${STORE_KIND}, 3 rounds)`, { timeout: 180_000 }, async (t) => {
  const { url, store, cleanup } = await createTestStore()
  t.after(cleanup)
  const { key } = await issueKey(store)
  const tally = await crashRounds({ storeUrl: url, key, rounds: 3, progress: (line) => t.diagnostic(line) })
  assert.ok(tally.acknowledged >= 3, `the load was acknowledged ${tally.acknowledged} times`)
  assert.deepEqual({ lost: tally.lost, serverErrors: tally.serverErrors, violations: tally.violations }, { lost: 0, serverErrors: 0, violations: [] })
})
