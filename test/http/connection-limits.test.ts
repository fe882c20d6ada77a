import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { describe, test } from 'node:test'
import { addressKey } from '../../src/http/client-address.ts'
import { SILENT_AFTER_MS } from '../../src/http/connection-slots.ts'
import { buildTestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { captureLog } from '../helpers/log-capture.ts'
import { listenTestApp, readResponse, sleep } from '../helpers/raw-http.ts'
import { closedWithin, connectFrom, healthz, keyedList } from '../helpers/connections.ts'
import { scrape } from '../helpers/scrape.ts'

/**
 * Connection slots over real sockets: while the process has room, one address's connections
 * are all served; once MAX_CONNECTIONS are open, a newcomer takes the slot of a connection that
 * is not busy (silent, slow, idle), the heaviest address's first, and when every connection is
 * busy its request is answered 503. Loopback gives distinct source addresses: floods come from
 * 127.0.0.2 on, the other client from a later address.
 */

describe('connection slots over real sockets', () => {
  test('while the process has room, 500 connections from one address each get their keyed request served', async (t) => {
    const { port, key } = await listenTestApp(t)
    const sockets: Socket[] = []
    for (let i = 0; i < 500; i++) sockets.push(await connectFrom(t, port, '127.0.0.2'))
    const statuses = await Promise.all(sockets.map((socket) => keyedList(socket, key)))
    assert.deepEqual(statuses, Array(500).fill(200))
  })

  test('the process full of idle keep-alive connections from eight addresses: 20 new connections from a ninth are all served, taking idle ones', async (t) => {
    const { app, port, key } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '64' } })
    const idle: Socket[] = []
    for (let address = 2; address < 10; address++) {
      for (let i = 0; i < 8; i++) idle.push(await connectFrom(t, port, `127.0.0.${address}`))
    }
    assert.deepEqual(await Promise.all(idle.map((socket) => keyedList(socket, key, 'keep-alive'))), Array(64).fill(200))
    const fates = idle.map((socket) => closedWithin(socket, 2000))
    const newcomers = await Promise.all(Array.from({ length: 20 }, () => connectFrom(t, port, '127.0.0.10')))
    const newcomersClosed = newcomers.map((socket) => closedWithin(socket, 2000))
    // Kept alive, each newcomer holds its slot: each took one, from the heaviest address, which
    // is the ninth itself once it holds more than the others, its idle connections already
    // served then.
    assert.deepEqual(await Promise.all(newcomers.map((socket) => keyedList(socket, key, 'keep-alive'))), Array(20).fill(200))
    const idleClosed = (await Promise.all(fates)).filter((fate) => fate.closed)
    assert.deepEqual(idleClosed, Array(idleClosed.length).fill({ closed: true, bytes: 0 }), 'the idle connections were closed with nothing sent on them')
    assert.equal(idleClosed.length + (await Promise.all(newcomersClosed)).filter((fate) => fate.closed).length, 20)
    assert.match(await scrape(app), /^petstore_connections_reclaimed_total\{state="idle"\} 20$/m)
  })

  test('with every slot busy, a new connection\'s request is answered 503 with Retry-After, the Error body and Connection: close; once a slot frees, it is served', async (t) => {
    const log = captureLog()
    const { app, port, key } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '4', LOG_LEVEL: 'info' }, logStream: log.stream })
    const received = { requests: 0 }
    app.server.on('request', () => { received.requests++ })
    // Creates whose bodies are still on their way: busy, never taken.
    const busy: Socket[] = []
    for (let i = 0; i < 4; i++) {
      const socket = await connectFrom(t, port, `127.0.0.${2 + i}`)
      socket.write(`POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name"`)
      busy.push(socket)
    }
    while (received.requests < 4) await sleep(10)
    const refused = await connectFrom(t, port, '127.0.0.9')
    const reply = readResponse(refused)
    refused.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
    const response = await reply
    const { headers } = response
    const requestId = headers['x-request-id']
    assertError(response, 503, 'unavailable', `The server holds all the connections it serves (MAX_CONNECTIONS) and each is busy; retry after the time in Retry-After. (request id ${requestId})`)
    assert.deepEqual({ retryAfter: headers['retry-after'], connection: headers.connection }, { retryAfter: '1', connection: 'close' })
    assert.match(String(requestId), /^[0-9a-f-]{36}$/)
    await once(refused, 'close')
    assert.deepEqual(await closedWithin(busy[0]!, 200), { closed: false, bytes: 0 }, 'the busy connections are untouched')
    busy[0]!.destroy()
    await sleep(100)
    assert.equal(await healthz(await connectFrom(t, port, '127.0.0.9')), 200)
    assert.match(await scrape(app), /^petstore_connections_refused_total 1$/m)
    const warnings = log.entries().filter((line) => line.level === 40 && String(line.msg).startsWith('connections at'))
    assert.deepEqual(warnings.map(({ limit, perAddress, msg }) => ({ limit, perAddress, msg })), [
      { limit: 4, perAddress: 32, msg: 'connections at MAX_CONNECTIONS: every connection is busy: new ones are answered 503' }
    ])
    // Closing the app waits for requests in progress, and stops the request timeout that would end them.
    for (const socket of busy) socket.destroy()
  })

  test('a connection whose last reply Fastify sent without its hooks (a URL it cannot route) is idle: taken to make room, nothing more is sent on it', async (t) => {
    const { port, key } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '1' } })
    const first = await connectFrom(t, port, '127.0.0.2')
    const reply = readResponse(first)
    first.write(`GET /v1/pets/%zz HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    assert.equal((await reply).status, 400)
    const fate = closedWithin(first, 2000)
    assert.equal(await keyedList(await connectFrom(t, port, '127.0.0.3'), key), 200)
    assert.deepEqual(await fate, { closed: true, bytes: 0 })
  })

  test('a connection taken while its first headers arrive hears 503 with Retry-After and the Error body', async (t) => {
    const { port, key } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '2' } })
    const slow = await connectFrom(t, port, '127.0.0.2')
    const slowReply = readResponse(slow)
    const slowClosed = once(slow, 'close')
    slow.write('GET /v1/pets HTTP/1.1\r\nHo')
    await connectFrom(t, port, '127.0.0.2').then((socket) => keyedList(socket, key, 'keep-alive'))
    await sleep(200)
    // The idle keep-alive connection is the same address's: the receiving one goes first.
    assert.equal(await keyedList(await connectFrom(t, port, '127.0.0.3'), key), 200)
    const response = await slowReply
    assertError(response, 503, 'unavailable', 'The server needed this connection for another client; retry the request.')
    assert.deepEqual({ retryAfter: response.headers['retry-after'], connection: response.headers.connection }, { retryAfter: '1', connection: 'close' })
    await slowClosed
  })

  test('addresses are counted as the failed-auth limit keys them: IPv4-mapped as IPv4, IPv6 per /64', () => {
    assert.deepEqual(['10.0.0.9', '::ffff:10.0.0.9', '::FFFF:10.0.0.9', '::ffff:a00:9', '2001:db8:1:2::1', '2001:DB8:1:2:ffff::9', '2001:db8:1:3::1', '::1'].map(addressKey),
      ['10.0.0.9', '10.0.0.9', '10.0.0.9', '10.0.0.9', '2001:db8:1:2::', '2001:db8:1:2::', '2001:db8:1:3::', '::'])
  })

  // A dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d; an instance bound to IPv4 sees
  // the same client as a.b.c.d: both are one address, one count and one failed-auth limit.
  const ipv6Loopback = Object.values(networkInterfaces()).flat().some((address) => address?.internal && address.family === 'IPv6')
  test('on a dual-stack listener an IPv4 client and its IPv4-mapped address share one count and one failed-auth limit', { skip: !ipv6Loopback && 'no IPv6 loopback' }, async (t) => {
    const api = await buildTestApp(t, { env: { MAX_CONNECTIONS: '3', FAILED_AUTH_LIMIT_PER_MINUTE: '1' } })
    await api.app.listen({ port: 0, host: '::' })
    const { port } = api.app.server.address() as { port: number }
    const overIPv4 = await connectFrom(t, port, '127.0.0.2')
    const mapped = await connectFrom(t, port, '::ffff:127.0.0.2', { host: '::ffff:127.0.0.1', family: 6 })
    const other = await connectFrom(t, port, '127.0.0.3')
    await sleep(SILENT_AFTER_MS)
    // Full: the newcomer from 127.0.0.3 takes a silent connection of the address holding the
    // most, which is 127.0.0.2 only if both of its connections count as one address's.
    const newcomer = await connectFrom(t, port, '127.0.0.3')
    assert.deepEqual((await Promise.all([overIPv4, mapped, other].map((socket) => closedWithin(socket, 300)))).map((fate) => fate.closed), [true, false, false])
    assert.equal(await healthz(newcomer), 200)

    const response = readResponse(mapped)
    mapped.write('GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer psk_guess\r\n\r\n')
    assert.equal((await response).status, 401)
    const asIPv4 = await api.app.inject({ url: '/v1/pets', headers: { authorization: 'Bearer psk_guess' }, remoteAddress: '127.0.0.2' })
    assert.equal(asIPv4.statusCode, 429, 'the failures over the mapped address used up the IPv4 address\'s limit')
  })

  test('a connection that sends nothing is closed after FIRST_BYTE_TIMEOUT_MS; one that sent part of its headers gets until HEADERS_TIMEOUT_MS', async (t) => {
    const { port } = await listenTestApp(t, { env: { FIRST_BYTE_TIMEOUT_MS: '300', HEADERS_TIMEOUT_MS: '1500', REQUEST_TIMEOUT_MS: '3000', CONNECTIONS_CHECK_INTERVAL_MS: '50' } })
    const started = performance.now()
    const silent = await connectFrom(t, port, '127.0.0.2')
    const talking = await connectFrom(t, port, '127.0.0.2')
    talking.write('GET /healthz HTTP/1.1\r\nHost: te')
    const talkingResponse = readResponse(talking, 5000)
    const silentFate = await closedWithin(silent, 1000)
    const silentMs = performance.now() - started
    assert.deepEqual(silentFate, { closed: true, bytes: 0 })
    assert.ok(silentMs >= 250 && silentMs < 1000, `silent connection closed after ${silentMs} ms`)
    const response = await talkingResponse
    const talkingMs = performance.now() - started
    assert.equal(response.status, 408)
    assert.ok(talkingMs >= 1400, `partial headers cut after ${talkingMs} ms, before HEADERS_TIMEOUT_MS`)
  })

  test('a keep-alive connection left idle after its response is closed after KEEP_ALIVE_TIMEOUT_MS, with nothing more sent', async (t) => {
    const { port } = await listenTestApp(t, { env: { KEEP_ALIVE_TIMEOUT_MS: '200' } })
    const socket = await connectFrom(t, port, '127.0.0.2')
    assert.equal(await healthz(socket), 200)
    // Node waits a second past the timeout it announces; the bound only keeps a broken server from hanging the test.
    assert.deepEqual(await closedWithin(socket, 10_000), { closed: true, bytes: 0 })
  })

  test('a request sent in time is served even when the event loop was held up past FIRST_BYTE_TIMEOUT_MS before reading it', async (t) => {
    const { port } = await listenTestApp(t, { env: { FIRST_BYTE_TIMEOUT_MS: '100' } })
    const socket = await connectFrom(t, port, '127.0.0.2')
    const response = readResponse(socket, 5000)
    // Let the server take the connection (and start its timer) before the request is sent.
    await sleep(20)
    // Sent from a socket event, so that the server's socket is looked at again only in the next
    // turn of the loop, after that turn's timers: the way a loop held up by other work sees it.
    const nudge = createServer((peer) => peer.once('data', () => peer.destroy()))
    nudge.listen(0, '127.0.0.1')
    await once(nudge, 'listening')
    t.after(() => nudge.close())
    const nudging = await connectFrom(t, (nudge.address() as AddressInfo).port, '127.0.0.1')
    nudging.write('x')
    await once(nudging, 'end')
    socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
    const until = performance.now() + 300
    while (performance.now() < until);
    assert.equal((await response).status, 200)
  })
})
