import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, createServer, type AddressInfo, type NetConnectOpts, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { describe, test, type TestContext } from 'node:test'
import { addressKey } from '../src/auth/rate-limits.ts'
import { buildTestApp } from './helpers.ts'
import { captureLog } from './log-capture.ts'
import { listenTestApp, readResponse, sleep } from './raw-http.ts'

/**
 * One address cannot take every connection slot: past MAX_CONNECTIONS_PER_ADDRESS its new
 * connections are closed at once, while other addresses are served; a connection that sends
 * nothing is closed after FIRST_BYTE_TIMEOUT_MS. Loopback gives distinct source addresses:
 * floods come from 127.0.0.2 on, the other client from the next address.
 */

async function connectFrom (t: TestContext, port: number, localAddress: string, options: Partial<NetConnectOpts> = {}): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress, ...options } as NetConnectOpts)
  t.after(() => socket.destroy())
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Whether the server closed the socket within the time, and what it had sent before. */
function closedWithin (socket: Socket, ms: number): Promise<{ closed: boolean, bytes: number }> {
  let bytes = 0
  socket.on('data', (chunk: Buffer) => { bytes += chunk.length })
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ closed: false, bytes }), ms)
    socket.once('close', () => { clearTimeout(timer); resolve({ closed: true, bytes }) })
  })
}

async function healthz (socket: Socket): Promise<number> {
  const response = readResponse(socket)
  socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
  return (await response).status
}

describe('connections per client address', () => {
  test('one address past MAX_CONNECTIONS_PER_ADDRESS has its new connections closed at once, and another address is still served', async (t) => {
    const log = captureLog()
    const { port } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '6', MAX_CONNECTIONS_PER_ADDRESS: '4', LOG_LEVEL: 'info' }, logStream: log.stream })
    const flood: Socket[] = []
    for (let i = 0; i < 6; i++) flood.push(await connectFrom(t, port, '127.0.0.2'))
    const fates = await Promise.all(flood.map((socket) => closedWithin(socket, 1000)))
    assert.deepEqual(fates, [
      ...Array.from({ length: 4 }, () => ({ closed: false, bytes: 0 })),
      { closed: true, bytes: 0 },
      { closed: true, bytes: 0 }
    ])
    const other = await connectFrom(t, port, '127.0.0.3')
    assert.equal(await healthz(other), 200)
    assert.equal(await healthz(flood[0]!), 200, 'the connections under the cap are served')
    // The cap frees up as the address's connections end.
    flood[1]!.destroy()
    await sleep(100)
    const again = await connectFrom(t, port, '127.0.0.2')
    assert.equal(await healthz(again), 200)
    // One warning for the flood, not one per refused connection.
    const warnings = log.entries().filter((line) => line.level === 40)
    assert.deepEqual(warnings.map(({ address, limit, msg }) => ({ address, limit, msg })), [
      { address: '127.0.0.2', limit: 4, msg: 'connections refused: this address holds MAX_CONNECTIONS_PER_ADDRESS connections' }
    ])
  })

  test('MAX_CONNECTIONS_PER_ADDRESS=0 puts no cap on an address', async (t) => {
    const { port } = await listenTestApp(t, { env: { MAX_CONNECTIONS_PER_ADDRESS: '0' } })
    const sockets: Socket[] = []
    for (let i = 0; i < 300; i++) sockets.push(await connectFrom(t, port, '127.0.0.2'))
    const fates = await Promise.all(sockets.map((socket) => closedWithin(socket, 500)))
    assert.equal(fates.filter((fate) => fate.closed).length, 0)
    assert.equal(await healthz(sockets[299]!), 200)
  })

  test('addresses are counted as the failed-auth limit keys them: IPv4-mapped as IPv4, IPv6 per /64', () => {
    assert.deepEqual(['10.0.0.9', '::ffff:10.0.0.9', '::FFFF:10.0.0.9', '::ffff:a00:9', '2001:db8:1:2::1', '2001:DB8:1:2:ffff::9', '2001:db8:1:3::1', '::1'].map(addressKey),
      ['10.0.0.9', '10.0.0.9', '10.0.0.9', '10.0.0.9', '2001:db8:1:2::', '2001:db8:1:2::', '2001:db8:1:3::', '::'])
  })

  // A dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d; an instance bound to IPv4 sees
  // the same client as a.b.c.d: both are one address, one cap and one failed-auth limit.
  const ipv6Loopback = Object.values(networkInterfaces()).flat().some((address) => address?.internal && address.family === 'IPv6')
  test('on a dual-stack listener an IPv4 client and its IPv4-mapped address share one count and one failed-auth limit', { skip: !ipv6Loopback && 'no IPv6 loopback' }, async (t) => {
    const log = captureLog()
    const api = await buildTestApp(t, { env: { MAX_CONNECTIONS_PER_ADDRESS: '2', FAILED_AUTH_LIMIT_PER_MINUTE: '1', LOG_LEVEL: 'info' }, logStream: log.stream })
    await api.app.listen({ port: 0, host: '::' })
    const { port } = api.app.server.address() as { port: number }
    const overIPv4 = await connectFrom(t, port, '127.0.0.2')
    const mapped = await connectFrom(t, port, '::ffff:127.0.0.2', { host: '::ffff:127.0.0.1', family: 6 })
    const third = await connectFrom(t, port, '127.0.0.2')
    assert.deepEqual((await Promise.all([overIPv4, mapped, third].map((socket) => closedWithin(socket, 500)))).map((fate) => fate.closed), [false, false, true])
    assert.deepEqual(log.entries().filter((line) => line.level === 40).map(({ address }) => address), ['127.0.0.2'])
    assert.equal(await healthz(await connectFrom(t, port, '127.0.0.3')), 200, 'another address is served')

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

  test('16 addresses holding their cap of silent connections, reopened as they are closed, leave another address served', async (t) => {
    const CAP = 3
    const { port } = await listenTestApp(t, {
      env: { MAX_CONNECTIONS: '64', MAX_CONNECTIONS_PER_ADDRESS: String(CAP), FIRST_BYTE_TIMEOUT_MS: '200', HEADERS_TIMEOUT_MS: '1000', CONNECTIONS_CHECK_INTERVAL_MS: '50', LOG_LEVEL: 'silent' }
    })
    // Each flooding address tries to hold more than its cap: past the cap its connections are
    // refused, the rest are closed after the first-byte timeout, and each is opened again.
    const flood = { on: true }
    const tally = { opened: 0, refused: 0, timedOut: 0 }
    const holdOne = async (localAddress: string) => {
      while (flood.on) {
        const socket = connect({ port, host: '127.0.0.1', localAddress })
        socket.on('error', () => {})
        const opened = performance.now()
        await once(socket, 'close')
        tally.opened++
        if (performance.now() - opened < 100) {
          tally.refused++
          await sleep(20)
        } else tally.timedOut++
      }
    }
    const floods = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 2}`).flatMap((address) => Array.from({ length: CAP * 2 }, () => holdOne(address)))
    await sleep(300)

    let served = 0
    const REQUESTS = 200
    const ask = async () => {
      const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.18' })
      socket.on('error', () => {})
      try {
        const response = readResponse(socket, 2000)
        socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n')
        if ((await response).status === 200) served++
      } catch {} finally { socket.destroy() }
    }
    const deadline = performance.now() + 3000
    for (let i = 0; i < REQUESTS; i += 4) {
      await Promise.all([ask(), ask(), ask(), ask()])
      // Spread over the flood's seconds, so the other address asks while slots churn.
      await sleep(Math.max(0, (deadline - performance.now()) / ((REQUESTS - i) / 4)))
    }
    flood.on = false
    await Promise.all(floods)
    t.diagnostic(`flood: ${JSON.stringify(tally)}; other address: ${served} of ${REQUESTS} served`)
    assert.ok(tally.refused > 0 && tally.timedOut > 0, `the flood was held at its cap and reopened: ${JSON.stringify(tally)}`)
    assert.ok(served >= REQUESTS * 0.99, `${served} of ${REQUESTS} served`)
  })
})
