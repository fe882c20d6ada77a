import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
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

const unavailableBody = (requestId: string) =>
  ({ code: 'unavailable', message: `The store is unavailable; retry later (request id ${requestId}).`, status: 503 })
const notReadyBody = (requestId: string) =>
  ({ code: 'unavailable', message: `The store is not reachable or not migrated (request id ${requestId})`, status: 503 })

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
    return { status: res.status, body: await res.json() as unknown, ms: performance.now() - started, retryAfter: res.headers.get('retry-after') }
  }
  async function recovers (requestId: string) {
    const deadline = Date.now() + 15_000
    for (;;) {
      const res = await call('GET', '/v1/pets', requestId)
      if (res.status === 200 || Date.now() > deadline) return res
      await sleep(200)
    }
  }
  const outageResponse = (res: { status: number, body: unknown, retryAfter: string | null }) => ({ status: res.status, body: res.body, retryAfter: res.retryAfter })

  const created = await call('POST', '/v1/pets', 'healthy-create', { name: 'Rex', categoryId: 7 })
  assert.deepEqual(created.body, { id: 1, name: 'Rex', categoryId: 7 })
  assert.deepEqual((await call('GET', '/readyz', 'healthy-ready')).body, { status: 'ready' })

  proxy.setMode('blackhole')
  const partitioned = await call('GET', '/v1/pets', 'partition-list')
  assert.deepEqual(outageResponse(partitioned), { status: 503, body: unavailableBody('partition-list'), retryAfter: '1' })
  assert.ok(partitioned.ms < RESPONSE_BOUND_MS, `the response came after ${partitioned.ms} ms`)
  const partitionedCreate = await call('POST', '/v1/pets', 'partition-create', { name: 'Lost', categoryId: 1 })
  assert.deepEqual(outageResponse(partitionedCreate), { status: 503, body: unavailableBody('partition-create'), retryAfter: '1' })
  assert.ok(partitionedCreate.ms < RESPONSE_BOUND_MS, `the response came after ${partitionedCreate.ms} ms`)
  const notReady = await call('GET', '/readyz', 'partition-ready')
  assert.deepEqual({ status: notReady.status, body: notReady.body }, { status: 503, body: notReadyBody('partition-ready') })
  assert.ok(notReady.ms < RESPONSE_BOUND_MS, `the response came after ${notReady.ms} ms`)
  assert.deepEqual((await call('GET', '/healthz', 'partition-alive')).body, { status: 'ok' })

  proxy.setMode('forward')
  const healed = await recovers('healed-list')
  assert.deepEqual({ status: healed.status, body: healed.body }, { status: 200, body: [created.body] })

  proxy.setMode('refuse')
  const refused = await call('GET', '/v1/pets/1', 'refused-get')
  assert.deepEqual(outageResponse(refused), { status: 503, body: unavailableBody('refused-get'), retryAfter: '1' })
  assert.ok(refused.ms < RESPONSE_BOUND_MS, `the response came after ${refused.ms} ms`)
  const refusedReady = await call('GET', '/readyz', 'refused-ready')
  assert.deepEqual({ status: refusedReady.status, body: refusedReady.body }, { status: 503, body: notReadyBody('refused-ready') })

  proxy.setMode('forward')
  const back = await recovers('back-list')
  assert.deepEqual({ status: back.status, body: back.body }, { status: 200, body: [created.body] })
  // The last readiness check saw the refusal; /readyz checks again once it is this old.
  await sleep(READINESS_FRESH_MS)
  assert.deepEqual((await call('GET', '/readyz', 'back-ready')).body, { status: 'ready' })
  assert.deepEqual((await call('POST', '/v1/pets', 'back-create', { name: 'Ace', categoryId: 8 })).body, { id: 2, name: 'Ace', categoryId: 8 })
  assert.equal(server.child.exitCode, null, 'the same process served throughout')
})
