import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTestStore, issueKey } from './helpers/app.ts'
import { shutdownRounds } from './helpers/shutdown-rounds.ts'

test('SIGTERM under load: readiness turns false, no accepted request fails or is reset, exit 0 within the drain, nothing acknowledged is lost (2 rounds)', { timeout: 120_000 }, async (t) => {
  const { url, store, cleanup } = await createTestStore()
  t.after(cleanup)
  const { key } = await issueKey(store)
  const tally = await shutdownRounds({ storeUrl: url, key, rounds: 2, progress: (line) => t.diagnostic(line) })
  assert.ok(tally.acknowledged >= 2, `the load was acknowledged ${tally.acknowledged} times`)
  assert.deepEqual({ lost: tally.lost, serverErrors: tally.serverErrors, violations: tally.violations }, { lost: 0, serverErrors: 0, violations: [] })
})
