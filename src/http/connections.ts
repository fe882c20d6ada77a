import type { ServerOptions, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Config } from '../config.ts'

type ConnectionSettings = Pick<Config, 'REQUEST_TIMEOUT_MS' | 'HEADERS_TIMEOUT_MS' | 'KEEP_ALIVE_TIMEOUT_MS' | 'CONNECTIONS_CHECK_INTERVAL_MS' | 'MAX_CONNECTIONS'>

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
    // Node's header and request timers start with the first byte; this one covers connections
    // that never send one (see limitConnections).
    connectionTimeout: config.REQUEST_TIMEOUT_MS,
    http: { headersTimeout: config.HEADERS_TIMEOUT_MS, connectionsCheckingInterval: config.CONNECTIONS_CHECK_INTERVAL_MS }
  }
}

type ServerSocket = Socket & { _httpMessage?: ServerResponse }

/**
 * A cap on connections per process (past it Node closes new ones at once), an end for
 * connections that stay silent, and, when the app closes, an end for connections that never
 * sent a byte (close() waits for every connection, and these are not "idle" to Node).
 */
export function limitConnections (app: FastifyInstance, config: ConnectionSettings) {
  const server = app.server
  server.maxConnections = config.MAX_CONNECTIONS
  // With a listener here Node no longer destroys a socket on inactivity by itself: only a
  // socket with no answer in progress is ended, so a slow handler is never cut.
  server.on('timeout', (socket: ServerSocket) => {
    if (!socket._httpMessage) socket.destroy()
  })
  const open = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  app.addHook('preClose', async () => {
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy()
  })
}
