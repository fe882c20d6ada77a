import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fuzz, FUZZ_ENV } from '../helpers/fuzz-requests.ts'
import { issueKey, STORE_KIND, TEST_AUDIT } from '../helpers/app.ts'
import { listenTestApp } from '../helpers/raw-http.ts'

test(`10 000 generated requests over HTTP: no 5xx, every response as documented, nothing without a key, nothing written by a rejected request (${STORE_KIND})`, { timeout: 300_000 }, async (t) => {
  const { port, key, store } = await listenTestApp(t, { env: FUZZ_ENV })
  const revoked = await issueKey(store, 'revoked')
  await store.revokeApiKey(revoked.id, TEST_AUDIT)
  const result = await fuzz({ port, key, revokedKey: revoked.key, store }, { requests: 10_000 })
  t.diagnostic(`fuzz: ${result.requests} requests, ${result.created} pets created`)
  assert.deepEqual({ requests: result.requests, serverErrors: result.serverErrors }, { requests: 10_000, serverErrors: 0 })
  assert.ok(result.created > 100, `only ${result.created} valid creates were generated`)
})
