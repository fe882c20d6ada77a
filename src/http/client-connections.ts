import type { ServerOptions, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyServerOptions, onRequestHookHandler } from 'fastify'
import { addressKey } from '../auth/rate-limits.ts'
import type { Config } from '../config.ts'
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
 * Records each request's response as the one in progress on its connection, in an onRequest
 * hook registered ahead of the others (limitConnections), before a later hook or the handler
 * can reply. Node's server keeps the same fact in a private field of the socket. A request
 * pipelined behind a response that closed the connection (a refused body's, see
 * lingering-close.ts) is still parsed from what arrives, but its response could never be sent:
 * it is dropped before it does anything, such as create a pet its client never hears of.
 * Hijacked, it runs no further hook.
 */
const recordResponse: onRequestHookHandler = (request, reply, done) => {
  const socket = request.raw.socket
  if (socket.writableEnded || socket.destroyed) {
    reply.hijack()
    socket.destroy()
    return
  }
  responses.set(socket, reply.raw)
  done()
}

/**
 * A cap on connections per process (past it Node closes new ones at once) and per client
 * address, an end for connections that send nothing within FIRST_BYTE_TIMEOUT_MS and for
 * responses the client stops reading (send-timeout.ts), and, when the app closes, an end for
 * connections that never sent a byte (close() waits for every connection, and these are not
 * "idle" to Node).
 */
export function limitConnections (app: FastifyInstance, config: ConnectionSettings) {
  const server = app.server
  server.maxConnections = config.MAX_CONNECTIONS
  // With a listener here Node no longer destroys a socket on inactivity by itself: only a
  // socket with no response in progress is ended, so a slow handler is never cut. A response the
  // client does not take is the send timeout's to end.
  server.on('timeout', (socket: Socket) => {
    if (!responseInProgress(socket)) socket.destroy()
  })
  app.addHook('onRequest', recordResponse)
  const open = new Set<Socket>()
  const admit = config.MAX_CONNECTIONS_PER_ADDRESS === 0 ? () => true : addressCap(app, config.MAX_CONNECTIONS_PER_ADDRESS)
  server.on('connection', (socket: Socket) => {
    if (!admit(socket)) return
    open.add(socket)
    // Silent connections are the cheapest way to hold slots: reopened as they are closed, a
    // few addresses keep their whole cap. One timer per connection, none per request: once a
    // byte is in, the header and request timeouts govern.
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
}

function closeIfSilent (socket: Socket) {
  // Timers run before the event loop reads the sockets: after the loop was held up, bytes that
  // arrived in time may still wait in the kernel. They are read before setImmediate runs.
  if (socket.bytesRead === 0) setImmediate(destroyIfSilent, socket)
}

function destroyIfSilent (socket: Socket) {
  if (socket.bytesRead === 0) socket.destroy()
}

/**
 * At most `cap` open connections per client address (an IPv6 client per /64, an IPv4-mapped
 * IPv6 address as its IPv4 address: the failed-auth limit's key): one address cannot take every slot of MAX_CONNECTIONS. A connection over
 * the cap is destroyed at once, before a byte is read. The TCP peer is counted, so behind a
 * proxy every client shares the proxy's address (see docs/configuration.md).
 */
function addressCap (app: FastifyInstance, cap: number): (socket: Socket) => boolean {
  const counts = new Map<string, number>()
  // Addresses refused since they last held no connection: one log line per flood, not one per
  // connection, so a flood cannot flood the log.
  const refusing = new Set<string>()
  return (socket) => {
    const peer = socket.remoteAddress
    // Already gone (reset while being accepted): nothing to count.
    if (peer === undefined) return true
    const address = addressKey(peer)
    const count = counts.get(address) ?? 0
    if (count >= cap) {
      socket.destroy()
      if (!refusing.has(address)) {
        refusing.add(address)
        app.log.warn({ address, limit: cap }, 'connections refused: this address holds MAX_CONNECTIONS_PER_ADDRESS connections')
      }
      return false
    }
    counts.set(address, count + 1)
    socket.once('close', () => {
      const left = counts.get(address)! - 1
      if (left > 0) {
        counts.set(address, left)
      } else {
        counts.delete(address)
        refusing.delete(address)
      }
    })
    return true
  }
}
