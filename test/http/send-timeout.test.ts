import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { describe, test, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { closeStalledReplies } from '../../src/http/send-timeout.ts'
import { listenTestApp, sleep } from '../helpers/raw-http.ts'

/**
 * A client that stops reading its replies cannot hold a connection, nor the reply's memory:
 * past SEND_TIMEOUT_MS without a write to it completing, the server destroys the connection.
 * The clients here are real sockets on loopback that never read, so the kernel's buffers fill
 * and the server's writes stay pending.
 */

const SEND_TIMEOUT_MS = 500
// The other timers far away, so that only the send timeout can end these connections; no load
// shedding, whose 503 the loading of the docs script could bring on; and no anonymous limit,
// whose small 429s would let the pipelined replies fit in the kernel's buffers.
const ENV = {
  MAX_EVENT_LOOP_DELAY_MS: '0',
  FAILED_AUTH_LIMIT_PER_MINUTE: '1000000',
  SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
  CONNECTIONS_CHECK_INTERVAL_MS: '50',
  REQUEST_TIMEOUT_MS: '60000',
  HEADERS_TIMEOUT_MS: '60000',
  KEEP_ALIVE_TIMEOUT_MS: '60000'
}

/** The server's side of each connection, with the moment it closed. */
function serverSockets (app: FastifyInstance) {
  const closedAt = new Map<Socket, number>()
  const sockets: Socket[] = []
  app.server.on('connection', (socket: Socket) => {
    sockets.push(socket)
    socket.once('close', () => closedAt.set(socket, Date.now()))
  })
  return { sockets, closedAt }
}

function openConnections (app: FastifyInstance): Promise<number> {
  return new Promise((resolve, reject) => app.server.getConnections((error, count) => error ? reject(error) : resolve(count)))
}

/** A connection whose replies are never read: no 'data' listener, so Node stops reading once its buffer is full. */
async function neverReading (t: TestContext, port: number): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1' })
  t.after(() => socket.destroy())
  // The server resets a connection it closes with requests still unread.
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Waits until the server has closed every connection, or the time is up. */
async function allClosed (app: FastifyInstance, withinMs: number): Promise<number> {
  const until = Date.now() + withinMs
  let open = await openConnections(app)
  while (open > 0 && Date.now() < until) {
    await sleep(20)
    open = await openConnections(app)
  }
  return open
}

/** Reads what is left on a socket until the server's end arrives. */
async function drain (socket: Socket): Promise<number> {
  let bytes = 0
  socket.on('data', (chunk: Buffer) => { bytes += chunk.length })
  socket.resume()
  await Promise.race([once(socket, 'close'), sleep(10_000)])
  return bytes
}

describe('a client that does not read its replies', { timeout: 60_000 }, () => {
  test('one large reply never read (the docs script): the connection is closed once SEND_TIMEOUT_MS pass without progress', async (t) => {
    const { app, port } = await listenTestApp(t, { env: ENV })
    const script = await app.inject({ url: '/docs/js/scalar.js' })
    const replyBytes = script.rawPayload.length
    const server = serverSockets(app)
    // Client and server share this process: a held-up event loop delays the close through no
    // fault of the server, so the longest hold-up seen is allowed for.
    const stalls = monitorEventLoopDelay({ resolution: 10 })
    stalls.enable()
    const client = await neverReading(t, port)
    const sentAt = Date.now()
    client.write('GET /docs/js/scalar.js HTTP/1.1\r\nHost: test\r\n\r\n')
    await sleep(SEND_TIMEOUT_MS / 2)
    // Written in chunks: while the client reads nothing, the server holds one chunk, not the script.
    const held = server.sockets[0]!.writableLength
    assert.ok(held > 0 && held <= 64 * 1024, `the server holds ${held} bytes for the client`)
    const open = await allClosed(app, 5000)
    stalls.disable()
    assert.equal(open, 0, 'the server still holds the connection')
    // The server's count drops before the socket's own close event records the time.
    if (!server.closedAt.has(server.sockets[0]!)) await once(server.sockets[0]!, 'close')
    const closedAfter = server.closedAt.get(server.sockets[0]!)! - sentAt
    const stalledMs = Math.round(stalls.max / 1e6)
    assert.ok(closedAfter >= SEND_TIMEOUT_MS && closedAfter < SEND_TIMEOUT_MS + 1000 + stalledMs,
      `closed ${closedAfter} ms after the request (the event loop was held up for at most ${stalledMs} ms)`)
    // What the kernel had taken still arrives, then the end: less than the whole reply.
    const received = await drain(client)
    assert.ok(received < replyBytes, `the whole reply arrived (${received} bytes): it was never cut`)
  })

  test('a hundred pipelined requests never read (the OpenAPI document): the connection is closed and the server holds no socket', async (t) => {
    const { app, port } = await listenTestApp(t, { env: ENV })
    const client = await neverReading(t, port)
    const sentAt = Date.now()
    client.write('GET /v1/openapi.json HTTP/1.1\r\nHost: test\r\n\r\n'.repeat(100))
    const open = await allClosed(app, 5000)
    assert.equal(open, 0, 'the server still holds the connection')
    t.diagnostic(`closed ${Date.now() - sentAt} ms after the requests`)
  })

  test('the clock counts time without progress, not the whole transfer: a reader that keeps taking bytes is never cut', async (t) => {
    // Stand-ins for sockets: on loopback a real reader that reads at all soon has the kernel's
    // buffers grown to hold the whole reply, so the server would not wait for it.
    const steady = new StandInSocket(1_000_000)
    const stalled = new StandInSocket(1_000_000)
    const stop = closeStalledReplies(new Set([steady, stalled]), { timeoutMs: SEND_TIMEOUT_MS, checkEveryMs: 10 })
    t.after(stop)
    const reading = setInterval(() => steady.take(1000), SEND_TIMEOUT_MS / 10)
    t.after(() => clearInterval(reading))
    await sleep(4 * SEND_TIMEOUT_MS)
    assert.deepEqual({ steady: steady.destroyed, stalled: stalled.destroyed }, { steady: false, stalled: true })
    // Nothing left to write is no stall, however long it lasts.
    const idle = new StandInSocket(0)
    const stopIdle = closeStalledReplies(new Set([idle]), { timeoutMs: SEND_TIMEOUT_MS, checkEveryMs: 10 })
    t.after(stopIdle)
    await sleep(2 * SEND_TIMEOUT_MS)
    assert.equal(idle.destroyed, false)
  })
})

/** A socket's write counters as Node keeps them: bytesWritten holds what waits too. */
class StandInSocket {
  bytesWritten: number
  writableLength: number
  destroyed = false

  constructor (waiting: number) {
    this.bytesWritten = waiting
    this.writableLength = waiting
  }

  /** The kernel takes some bytes: a write completes. */
  take (bytes: number) {
    this.writableLength -= Math.min(bytes, this.writableLength)
  }

  destroy () {
    this.destroyed = true
  }
}
