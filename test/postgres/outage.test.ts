import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
import { assertError } from '../helpers/errors.ts'
import { serverBehindProxy } from '../helpers/postgres-behind-proxy.ts'

/*
 * PostgreSQL is shared with other work on this machine, so the outage is made on the network
 * instead of by stopping the server: the service under test (a real server process) reaches
 * PostgreSQL only through a TCP proxy in this test, which can reset every connection ("the
 * server is down") or swallow every byte without replying ("a network partition", which
 * only timeouts can detect), and then pass traffic again.
 */

const CONNECT_TIMEOUT_MS = 500
const STATEMENT_TIMEOUT_MS = 1000
// Worst case for one request: a connection attempt, or a statement on a connection that went
// silent (statement timeout + the 1 s read margin), plus slack for a busy machine.
const RESPONSE_BOUND_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 1000 + 2000

const unavailable = (requestId: string) => `The store is unavailable; retry later (request id ${requestId}).`
const notReady = (requestId: string) => `The store is not reachable or not migrated (request id ${requestId})`

test('in a PostgreSQL outage requests get 503 unavailable in bounded time, fails /readyz, and heals without a restart', { timeout: 60_000 }, async (t) => {
  const { proxy, server, key } = await serverBehindProxy(t, {
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS)
  })

  async function call (method: string, path: string, requestId: string, body?: unknown) {
    const started = performance.now()
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'x-request-id': requestId, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      // A hang fails here, with its own message, rather than at the test's timeout.
      signal: AbortSignal.timeout(RESPONSE_BOUND_MS * 2)
    })
    const text = await res.text()
    const reply = { status: res.status, headers: res.headers, body: text }
    return { status: res.status, body: JSON.parse(text) as unknown, reply, ms: performance.now() - started, retryAfter: res.headers.get('retry-after') }
  }
  async function recovers (requestId: string) {
    const deadline = Date.now() + 15_000
    for (;;) {
      const res = await call('GET', '/v1/pets', requestId)
      if (res.status === 200 || Date.now() > deadline) return res
      await sleep(200)
    }
  }

  const created = await call('POST', '/v1/pets', 'healthy-create', { name: 'Rex', categoryId: 7 })
  assert.deepEqual(created.body, { id: 1, name: 'Rex', categoryId: 7 })
  assert.deepEqual((await call('GET', '/readyz', 'healthy-ready')).body, { status: 'ready' })

  proxy.setMode('blackhole')
  const partitioned = await call('GET', '/v1/pets', 'partition-list')
  assertError(partitioned.reply, 503, 'unavailable', unavailable('partition-list'))
  assert.equal(partitioned.retryAfter, '1')
  assert.ok(partitioned.ms < RESPONSE_BOUND_MS, `the response came after ${partitioned.ms} ms`)
  const partitionedCreate = await call('POST', '/v1/pets', 'partition-create', { name: 'Lost', categoryId: 1 })
  assertError(partitionedCreate.reply, 503, 'unavailable', unavailable('partition-create'))
  assert.equal(partitionedCreate.retryAfter, '1')
  assert.ok(partitionedCreate.ms < RESPONSE_BOUND_MS, `the response came after ${partitionedCreate.ms} ms`)
  const partitionedReady = await call('GET', '/readyz', 'partition-ready')
  assertError(partitionedReady.reply, 503, 'unavailable', notReady('partition-ready'))
  assert.ok(partitionedReady.ms < RESPONSE_BOUND_MS, `the response came after ${partitionedReady.ms} ms`)
  assert.deepEqual((await call('GET', '/healthz', 'partition-alive')).body, { status: 'ok' })

  proxy.setMode('forward')
  const healed = await recovers('healed-list')
  assert.deepEqual({ status: healed.status, body: healed.body }, { status: 200, body: [created.body] })

  proxy.setMode('refuse')
  const refused = await call('GET', '/v1/pets/1', 'refused-get')
  assertError(refused.reply, 503, 'unavailable', unavailable('refused-get'))
  assert.equal(refused.retryAfter, '1')
  assert.ok(refused.ms < RESPONSE_BOUND_MS, `the response came after ${refused.ms} ms`)
  const refusedReady = await call('GET', '/readyz', 'refused-ready')
  assertError(refusedReady.reply, 503, 'unavailable', notReady('refused-ready'))

  proxy.setMode('forward')
  const back = await recovers('back-list')
  assert.deepEqual({ status: back.status, body: back.body }, { status: 200, body: [created.body] })
  // The last readiness check saw the refusal; /readyz checks again once it is this old.
  await sleep(READINESS_FRESH_MS)
  assert.deepEqual((await call('GET', '/readyz', 'back-ready')).body, { status: 'ready' })
  assert.deepEqual((await call('POST', '/v1/pets', 'back-create', { name: 'Ace', categoryId: 8 })).body, { id: 2, name: 'Ace', categoryId: 8 })
  assert.equal(server.child.exitCode, null, 'the same process served throughout')
})
