import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Counter } from 'prom-client'
import type { Config } from '../config.ts'
import { addressKey } from './client-address.ts'
import { ConnectionSlots, type ConnectionState } from './connection-slots.ts'
import { ApiError } from './errors.ts'
import { replyAndClose } from './raw-replies.ts'
import { closeStalledReplies } from './send-timeout.ts'

type ConnectionSettings = Pick<Config, 'REQUEST_TIMEOUT_MS' | 'HEADERS_TIMEOUT_MS' | 'KEEP_ALIVE_TIMEOUT_MS' | 'CONNECTIONS_CHECK_INTERVAL_MS' | 'MAX_CONNECTIONS' | 'SEND_TIMEOUT_MS' | 'MAX_CONNECTIONS_PER_ADDRESS' | 'FIRST_BYTE_TIMEOUT_MS'>

/**
 * Slow clients cannot pin connections. Node's defaults let slow headers hold a connection for
 * about 90 s and never end a body sent one byte at a time. Here: the headers must be in within
 * HEADERS_TIMEOUT_MS and the whole request within REQUEST_TIMEOUT_MS (else 408), checked every
 * CONNECTIONS_CHECK_INTERVAL_MS; an idle keep-alive connection ends after KEEP_ALIVE_TIMEOUT_MS.
 */
export function connectionOptions (config: ConnectionSettings): Pick<FastifyServerOptions, 'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    // A connection that never sends a byte is closed after FIRST_BYTE_TIMEOUT_MS (see
    // limitConnections); this inactivity timeout ends any other that goes quiet with no response
    // in progress.
    connectionTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: config.CONNECTIONS_CHECK_INTERVAL_MS,
      // A request without Content-Length or Transfer-Encoding (every GET and HEAD a client
      // sends) has no body: Node skips its body stream's life cycle (events, ticks). The create,
      // the one route that parses a body, takes an empty one for it (http/empty-bodies.ts).
      optimizeEmptyRequests: true
    }
  }
}

/** The response to the latest request on each connection, recorded as the request arrives. */
const responses = new WeakMap<Socket, ServerResponse>()

/**
 * True while a response on this connection is still to be sent: its handler may still run, or
 * its bytes wait in the socket. Once it has finished, the connection is idle to Node.
 */
export function responseInProgress (socket: Socket): boolean {
  const response = responses.get(socket)
  return response !== undefined && !response.writableFinished
}

/**
 * True when bytes of a response may already be on this connection: the one in progress has
 * sent its head, or it waits behind an earlier one (pipelined requests), which is then still
 * being sent. Bytes written to the socket now would land in the middle of it.
 */
export function responseBegun (socket: Socket): boolean {
  const response = responses.get(socket)
  return response !== undefined && !response.writableFinished && (response.headersSent || response.socket !== socket)
}

/**
 * Records each response as the one in progress on its connection, as soon as its request is
 * parsed: before Fastify's own listener runs, so that replies Fastify sends without running
 * hooks (a URL it cannot route) are recorded too. Node's server keeps the same fact in a private
 * field of the socket.
 */
function recordResponse (request: IncomingMessage, response: ServerResponse) {
  responses.set(request.socket, response)
}

/** Where a connection stands, for the choice of which one makes room (connection-slots.ts). */
function stateOf (socket: Socket): ConnectionState {
  if (socket.bytesRead === 0) return 'silent'
  const response = responses.get(socket)
  if (response === undefined) return 'receiving'
  return response.writableFinished ? 'idle' : 'busy'
}

/**
 * Ends a connection taken away to make room, once the bytes that reached the kernel by now have
 * been read (they are read before setImmediate runs): a request that had arrived makes it busy,
 * and it is left alone. A client that has begun a request hears why.
 */
function closeForRoom (socket: Socket) {
  setImmediate(() => {
    const state = stateOf(socket)
    if (state === 'receiving') replyAndClose(socket, 'unavailable', 'The server needed this connection for another client; retry the request.', ['Retry-After: 1'])
    else if (state !== 'busy') socket.destroy()
  })
}

const NO_ROOM = 'The server holds all the connections it serves (MAX_CONNECTIONS) and each is busy; retry after the time in Retry-After.'
const NO_ROOM_HEADERS = { 'retry-after': '1', connection: 'close' }

/** Counters of what the process did when it was full. */
export interface ConnectionCounters {
  /** Connections closed to make room for a new one, by the state they were in. */
  reclaimed: Counter<'state'>
  /** Connections whose request was answered 503 because every slot was busy. */
  refused: Counter
}

/**
 * Connection slots (connection-slots.ts: MAX_CONNECTIONS, and MAX_CONNECTIONS_PER_ADDRESS as an
 * address's share when they are all held), an end for connections that send nothing within
 * FIRST_BYTE_TIMEOUT_MS and for responses the client stops reading (send-timeout.ts), and,
 * when the app closes, an end for connections that never sent a byte (close() waits for every
 * connection, and these are not "idle" to Node).
 *
 * A connection that finds every slot busy is still accepted, to answer its request with 503 and
 * Retry-After rather than close it unheard; it holds no slot. Node itself closes new connections
 * unheard only past twice MAX_CONNECTIONS, a bound on file descriptors that such refusals, each
 * closed after its reply or its first-byte timeout, reach only in a flood.
 */
export const limitConnections = fp(async function limitConnections (app: FastifyInstance) {
  const { config, metrics: { connections: counters } } = app
  const server = app.server
  server.maxConnections = 2 * config.MAX_CONNECTIONS
  // With a listener here Node no longer destroys a socket on inactivity by itself: only a
  // socket with no response in progress is ended, so a slow handler is never cut. A response the
  // client does not take is the send timeout's to end.
  server.on('timeout', (socket: Socket) => {
    if (!responseInProgress(socket)) socket.destroy()
  })
  server.prependListener('request', recordResponse)
  const open = new Set<Socket>()
  let warnedAt = -Infinity
  const underPressure = (event: string) => {
    const now = performance.now()
    if (now - warnedAt < PRESSURE_WARNING_EVERY_MS) return
    warnedAt = now
    app.log.warn({ limit: config.MAX_CONNECTIONS, perAddress: config.MAX_CONNECTIONS_PER_ADDRESS }, `connections at MAX_CONNECTIONS: ${event}`)
  }
  const slots = new ConnectionSlots<Socket>({
    capacity: config.MAX_CONNECTIONS,
    share: config.MAX_CONNECTIONS_PER_ADDRESS,
    addressOf: addressKey,
    stateOf,
    close (socket, state) {
      counters.reclaimed.inc({ state })
      underPressure('closing connections that are not busy to make room, the heaviest address\'s first')
      closeForRoom(socket)
    }
  })
  // Connections accepted while every slot was busy: each holds no slot until its request comes,
  // which is then served if a slot can be had by now, else answered 503.
  const refused = new WeakSet<Socket>()
  // Ahead of every other onRequest hook. A request pipelined behind a response that closed the
  // connection (a refused body's, see lingering-close.ts) is still parsed from what arrives, but
  // its response could never be sent: it is dropped before it does anything, such as create a
  // pet its client never hears of. Hijacked, it runs no further hook.
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket
    if (socket.writableEnded || socket.destroyed) {
      reply.hijack()
      socket.destroy()
      return
    }
    if (!refused.has(socket)) return done()
    refused.delete(socket)
    if (slots.admit(socket)) return done()
    counters.refused.inc()
    underPressure('every connection is busy: new ones are answered 503')
    // Before requestLogging's hook would add it: the 503 names its request id like any other.
    reply.header('x-request-id', request.id)
    done(new ApiError('unavailable', NO_ROOM, { headers: NO_ROOM_HEADERS }))
  })
  server.on('connection', (socket: Socket) => {
    if (!slots.admit(socket)) refused.add(socket)
    open.add(socket)
    // Silent connections are the cheapest way to hold slots: one timer per connection, none
    // per request. Once a byte is in, the header and request timeouts govern.
    const firstByte = setTimeout(closeIfSilent, config.FIRST_BYTE_TIMEOUT_MS, socket)
    firstByte.unref()
    socket.once('close', () => {
      open.delete(socket)
      clearTimeout(firstByte)
    })
  })
  const stopSendTimeout = closeStalledReplies(open, { timeoutMs: config.SEND_TIMEOUT_MS, checkEveryMs: config.CONNECTIONS_CHECK_INTERVAL_MS })
  app.addHook('onClose', async () => stopSendTimeout())
  app.addHook('preClose', async () => {
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy()
  })
}, { name: 'connection-limits', decorators: { fastify: ['config', 'metrics'] } })

/** One warning a minute at most while the process is full: a flood cannot flood the log. */
const PRESSURE_WARNING_EVERY_MS = 60_000

function closeIfSilent (socket: Socket) {
  // Timers run before the event loop reads the sockets: after the loop was held up, bytes that
  // arrived in time may still wait in the kernel. They are read before setImmediate runs.
  if (socket.bytesRead === 0) setImmediate(destroyIfSilent, socket)
}

function destroyIfSilent (socket: Socket) {
  if (socket.bytesRead === 0) socket.destroy()
}
