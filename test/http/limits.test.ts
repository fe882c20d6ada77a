import assert from 'node:assert/strict'
import { Agent } from 'node:http'
import type { Socket } from 'node:net'
import { describe, test } from 'node:test'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { loadConfig } from '../../src/config.ts'
import { buildTestApp, createTestStore, issueKey, testConfig } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { listenTestApp, openSocket, readResponse, sleep } from '../helpers/raw-http.ts'
import { send, startServer } from '../helpers/server-process.ts'

describe('limits on what one client can make the server do', () => {
  test('timeouts and the drain out of order stop start-up with one line naming both settings', () => {
    assert.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '20000' }), { message: 'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (got 20000 and 10000)' })
    assert.throws(() => loadConfig({ SHUTDOWN_DRAIN_MS: '10000' }), { message: 'SHUTDOWN_DRAIN_MS must be less than SHUTDOWN_TIMEOUT_MS (got 10000 and 10000)' })
    assert.equal(loadConfig({ HEADERS_TIMEOUT_MS: '10000' }).HEADERS_TIMEOUT_MS, 10000)
  })

  test('replies carry the security headers of a JSON API, errors and operational endpoints too', async (t) => {
    const app = await buildTestApp(t)
    const expected = {
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-resource-policy': 'same-origin',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none';frame-ancestors 'none'"
    }
    for (const [url, headers] of [['/v1/pets', {}], ['/healthz', {}], ['/nowhere', {}]] as const) {
      const res = await app.app.inject({ url, headers })
      const got = Object.fromEntries(Object.keys(expected).map((name) => [name, res.headers[name]]))
      assert.deepEqual(got, expected, url)
    }
    // A listing's last page may be stored by the client, never by a shared cache, and is
    // revalidated each time (test/api/conditional-requests.test.ts has every read's policy).
    const page = await app.app.inject({ url: '/v1/pets', headers: app.auth })
    const got = Object.fromEntries(Object.keys(expected).map((name) => [name, page.headers[name]]))
    assert.deepEqual(got, { ...expected, 'cache-control': 'private, no-cache' }, 'a page')
    // Not JSON (the docs page): the same headers but the JSON policy, under which the page's
    // script would not run. The docs page holds no data: kept, but revalidated.
    for (const [url, cacheControl] of [['/docs/', 'no-cache']]) {
      const res = await app.app.inject({ url })
      const got = Object.fromEntries(Object.keys(expected).map((name) => [name, res.headers[name]]))
      assert.deepEqual(got, { ...expected, 'cache-control': cacheControl, 'content-security-policy': undefined }, url)
    }
  })

  test('browsers on any origin may call the API: preflights get 204, replies expose their headers', async (t) => {
    const app = await buildTestApp(t)
    const origin = 'https://example.com'
    const corsOf = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-') || name === 'vary'))
    const preflight = await app.app.inject({ method: 'OPTIONS', url: '/v1/pets', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } })
    assert.deepEqual([preflight.statusCode, preflight.body, corsOf(preflight.headers)], [204, '', {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, POST',
      'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id',
      'access-control-max-age': '600',
      vary: 'Origin'
    }])
    const exposed = {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'Location, Link, ETag, Deprecation, Sunset, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, WWW-Authenticate, X-Request-Id',
      vary: 'Origin'
    }
    const listed = await app.inject({ url: '/v1/pets', headers: { ...app.auth, origin } })
    assert.deepEqual([listed.statusCode, corsOf(listed.headers)], [200, exposed])
    // Errors too: a page must be able to read WWW-Authenticate or Retry-After.
    const refused = await app.inject({ url: '/v1/pets', headers: { origin } })
    assert.deepEqual([refused.statusCode, corsOf(refused.headers)], [401, exposed])
    // A request that names no origin is not a browser's cross-origin call: no CORS fields.
    const direct = await app.inject({ url: '/v1/pets', headers: app.auth })
    assert.deepEqual([direct.statusCode, corsOf(direct.headers)], [200, { vary: 'Origin' }])
    // Without the two preflight headers OPTIONS is an ordinary request: not a method of /pets.
    const plainOptions = await app.inject({ method: 'OPTIONS', url: '/v1/pets', headers: app.auth })
    assert.deepEqual([plainOptions.statusCode, corsOf(plainOptions.headers)], [405, { vary: 'Origin' }])
    const optionsFromPage = await app.inject({ method: 'OPTIONS', url: '/v1/pets', headers: { ...app.auth, origin } })
    assert.deepEqual([optionsFromPage.statusCode, corsOf(optionsFromPage.headers)], [405, exposed])
    // Only the API is open to other origins.
    const health = await app.inject({ method: 'OPTIONS', url: '/healthz', headers: { origin, 'access-control-request-method': 'GET' } })
    assert.deepEqual([health.statusCode, corsOf(health.headers)], [405, { vary: 'Origin' }])
  })

  test('an overloaded event loop sheds requests with 503 unavailable and Retry-After; liveness still replies', async (t) => {
    let clock = Date.now()
    const testApp = await buildTestApp(t, { env: { MAX_EVENT_LOOP_DELAY_MS: '20' }, now: () => clock })
    const { app } = testApp
    await app.ready()
    // Block the loop until the sampler sees the delay (it samples once a second).
    for (let tries = 0; !app.isUnderPressure() && tries < 40; tries++) {
      const until = Date.now() + 200
      while (Date.now() < until) { /* busy: this is the overload */ }
      await sleep(60)
    }
    assert.ok(app.isUnderPressure(), 'the event loop delay was never seen')
    assert.equal((await testApp.inject({ url: '/v1/pets', headers: testApp.auth })).statusCode, 200, 'nothing is shed in the start-up grace')
    // Past the grace, in which the monitor's samples hold start-up work, not load.
    clock += 2000
    const shed = await testApp.inject({ url: '/v1/pets', headers: testApp.auth })
    assertError(shed, 503, 'unavailable', `The server is overloaded; retry after the time in Retry-After. (request id ${shed.headers['x-request-id']})`)
    assert.equal(shed.headers['retry-after'], '5')
    assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200)
  })

  test('test apps shed nothing: MAX_EVENT_LOOP_DELAY_MS=0, their default, switches shedding off however long the event loop lags', async (t) => {
    assert.equal(testConfig().MAX_EVENT_LOOP_DELAY_MS, 0, 'test apps run without load shedding')
    let clock = Date.now()
    const testApp = await buildTestApp(t, { now: () => clock })
    await testApp.app.ready()
    const lag = monitorEventLoopDelay({ resolution: 10 })
    lag.enable()
    // The overload of the test above, for more than two of the monitor's samples (one a second).
    for (const until = Date.now() + 2500; Date.now() < until;) {
      const busyUntil = Date.now() + 200
      while (Date.now() < busyUntil) { /* busy: this is the overload */ }
      await sleep(60)
    }
    lag.disable()
    assert.ok(lag.max / 1e6 >= 150, `the event loop lagged only ${(lag.max / 1e6).toFixed(0)} ms`)
    clock += 2000
    assert.equal(testApp.app.isUnderPressure(), false)
    assert.equal((await testApp.inject({ url: '/v1/pets', headers: testApp.auth })).statusCode, 200)
  })

  test('connections beyond twice MAX_CONNECTIONS are closed at once, those between are answered 503; the cap frees up as connections end', async (t) => {
    const { port, key } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '2' } })
    const held: Socket[] = []
    t.after(() => held.forEach((s) => s.destroy()))
    // New connections that have not yet sent a byte: none of them can be taken within a second.
    for (let i = 0; i < 4; i++) held.push(await openSocket(port))
    await sleep(50)
    const extra = await openSocket(port)
    held.push(extra)
    const dropped = await new Promise<boolean>((resolve) => {
      extra.once('close', () => resolve(true))
      extra.on('error', () => {})
      setTimeout(() => resolve(false), 2000)
    })
    assert.ok(dropped, 'the connection over twice the cap stayed open')
    const refused = readResponse(held[3]!)
    held[3]!.write(`GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    assert.equal((await refused).status, 503)
    held[0]!.destroy()
    await sleep(50)
    const again = await openSocket(port)
    held.push(again)
    const response = readResponse(again)
    again.write(`GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    assert.equal((await response).status, 200)
  })

  test('a connection that never sends a byte is closed after FIRST_BYTE_TIMEOUT_MS; a slow response in progress is not cut', async (t) => {
    const { port, key } = await listenTestApp(t, {
      env: { FIRST_BYTE_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '300', HEADERS_TIMEOUT_MS: '300', CONNECTIONS_CHECK_INTERVAL_MS: '50' },
      faults: { beforeStoreCall: async (operation) => { if (operation === 'getPet') await sleep(900) } }
    })
    // Client and server share this process: were it held up (a busy machine), the close would
    // be seen late through no fault of the server. The longest hold-up seen is allowed for.
    const stalls = monitorEventLoopDelay({ resolution: 10 })
    stalls.enable()
    // Timed from before the connection is asked for: the server's timer starts later, so a
    // hold-up between its accept and the client's connect cannot make the close look early.
    const started = Date.now()
    const silent = await openSocket(port)
    t.after(() => silent.destroy())
    const ended = await new Promise<number>((resolve) => {
      silent.once('close', () => resolve(Date.now() - started))
      setTimeout(() => resolve(-1), 10_000)
    })
    stalls.disable()
    const stalledMs = Math.round(stalls.max / 1e6)
    assert.ok(ended >= 250 && ended < 1500 + stalledMs, `closed after ${ended} ms (the event loop was held up for at most ${stalledMs} ms)`)
    const busy = await openSocket(port)
    t.after(() => busy.destroy())
    const response = readResponse(busy)
    busy.write(`GET /v1/pets/1 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    assert.equal((await response).status, 404)
  })

  test('500 connections sending headers a byte a second do not slow a normal client (p99 < 100 ms), and are cut after HEADERS_TIMEOUT_MS', async (t) => {
    const { url, store, cleanup } = await createTestStore()
    const { key } = await issueKey(store)
    await store.close()
    t.after(cleanup)
    // All 501 clients share one address: the per-address cap is not what this test is about.
    const server = await startServer({ DATABASE_URL: url, HEADERS_TIMEOUT_MS: '2500', RATE_LIMIT_PER_MINUTE: '0', MAX_CONNECTIONS_PER_ADDRESS: '0' })
    t.after(() => server.stop('SIGKILL'))
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const list = () => send(agent, server.port, 'GET', '/v1/pets?limit=5', { authorization: `Bearer ${key}` })
    for (let i = 0; i < 20; i++) assert.equal((await list()).status, 200)

    const slow = await Promise.all(Array.from({ length: 500 }, () => openSocket(server.port)))
    t.after(() => slow.forEach((s) => s.destroy()))
    const cut = slow.map((socket) => readResponse(socket, 8000).then((response) => response.status, () => 0))
    const request = 'GET /v1/pets HTTP/1.1\r\nHost: test\r\n'
    let sent = 0
    const trickle = setInterval(() => {
      for (const socket of slow) if (!socket.destroyed && socket.writable) socket.write(request[sent % request.length]!)
      sent++
    }, 1000)
    t.after(() => clearInterval(trickle))
    for (const socket of slow) socket.write(request[0]!)
    sent = 1

    const latencies: number[] = []
    const until = Date.now() + 2000
    while (Date.now() < until) {
      const started = performance.now()
      assert.equal((await list()).status, 200)
      latencies.push(performance.now() - started)
    }
    latencies.sort((a, b) => a - b)
    const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!
    t.diagnostic(`slow clients: ${latencies.length} requests of a normal client, p99 ${p99.toFixed(1)} ms`)
    assert.ok(latencies.length >= 100 && p99 < 100, `${latencies.length} requests, p99 ${p99.toFixed(1)} ms`)

    const statuses = await Promise.all(cut)
    clearInterval(trickle)
    assert.deepEqual(statuses.filter((status) => status !== 408), [], 'every slow connection ends with 408')
  })
})
