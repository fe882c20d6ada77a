import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, issueKey, json, TEST_AUDIT } from '../helpers/app.ts'
import { captureLog } from '../helpers/log-capture.ts'

test('logs at every level, trace included, hold neither keys nor Authorization headers', async (t) => {
  const log = captureLog()
  let failNext = false
  const app = await buildTestApp(t, {
    env: { LOG_LEVEL: 'trace' },
    logStream: log.stream,
    faults: { beforeStoreCall: (operation) => { if (failNext && operation === 'getPet') { failNext = false; throw new Error('boom') } } }
  })
  const revoked = await issueKey(app.store, 'revoked')
  await app.store.revokeApiKey(revoked.id, TEST_AUDIT)
  const guess = 'psk_' + 'A'.repeat(43)
  const requests = [
    { url: '/v1/pets', headers: app.auth },
    { method: 'POST' as const, url: '/v1/pets', headers: { ...app.auth, ...json, 'idempotency-key': 'k1' }, payload: '{"name":"Rex","categoryId":7}' },
    { method: 'POST' as const, url: '/v1/pets', headers: { ...app.auth, ...json }, payload: '{"name":' },
    { url: '/v1/pets/1', headers: { authorization: `bearer ${app.key}` } },
    { url: '/v1/pets', headers: { authorization: `Bearer ${guess}` } },
    { url: '/v1/pets', headers: { authorization: `Bearer ${revoked.key}` } },
    { url: '/v1/pets', headers: { authorization: `Basic ${Buffer.from(`user:${app.key}`).toString('base64')}` } },
    { url: '/v1/nowhere', headers: app.auth }
  ]
  for (const request of requests) await app.app.inject(request)
  failNext = true
  assert.equal((await app.app.inject({ url: '/v1/pets/424242', headers: app.auth })).statusCode, 500)
  await app.app.close()

  const text = log.text()
  assert.equal(app.app.log.level, 'trace')
  assert.ok(log.entries().filter((entry) => entry.msg === 'request').length >= requests.length, 'every request was logged')
  for (const secret of [app.key, revoked.key, guess, app.key.slice(4), Buffer.from(`user:${app.key}`).toString('base64')]) {
    assert.ok(!text.includes(secret), `the log holds ${secret.slice(0, 12)}…`)
  }
  assert.doesNotMatch(text, /bearer |basic /i)
})
