import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** The bounds of one lingering close. */
export interface LingerBounds {
  /** The longest a connection lingers after its response. */
  ms: number
  /** The most bytes it reads and throws away meanwhile (counted on the wire, framing included). */
  bytes: number
}

/**
 * Long enough for a client that sent a few MiB by mistake to finish writing them on a slow link;
 * shorter than REQUEST_TIMEOUT_MS, for which any slow client may hold a connection anyway, so
 * lingering lets no one hold a connection longer than a slow request does.
 */
export const LINGER: LingerBounds = { ms: 2000, bytes: 4 * 1024 * 1024 }

/**
 * A lingering close, as nginx's lingering_close. A response given before the request's body is
 * in (413 for a body over the limit, and every refusal of the body parser) closes the
 * connection, as the rest of the body cannot be told from a next request. Closed at once, the
 * socket is reset by the kernel when more of the body arrives, and a client still writing gets
 * EPIPE or ECONNRESET, often before it has read the response, which the reset discards. Instead
 * the response is followed by a FIN, and the connection goes on reading and throwing away the
 * rest of the body, until the body ends, the client ends its side or a bound is reached; only
 * then is it destroyed. A request pipelined behind it is dropped (client-connections.ts).
 *
 * Node offers no public way to close a connection after a response yet go on reading it: its
 * server closes one it does not keep by calling socket.destroySoon() once the response is
 * written, which ends the socket and destroys it as soon as the FIN is out. That call is what is
 * replaced, for this one response's socket: the one Node internal this service relies on
 * (docs/decisions.md), and test/http/lingering-close.test.ts fails if Node stops making that call.
 * A response that keeps the connection (Node then reads the rest of the body itself) leaves the
 * socket as it was.
 */
export const lingeringClose = fp(async function lingeringClose (app: FastifyInstance, { bounds = LINGER }: { bounds?: LingerBounds }) {
  app.addHook('onSend', (request, reply, payload, done) => {
    // `=== false`: only a request read from a socket says; an injected one has no such field.
    if (request.raw.complete === false) armLinger(request.raw, reply.raw, bounds)
    done(null, payload)
  })
}, { name: 'lingering-close' })

function armLinger (request: IncomingMessage, response: ServerResponse, bounds: LingerBounds) {
  const socket = request.socket
  if (Object.hasOwn(socket, 'destroySoon')) return
  let lastByte = Infinity
  // Reading the body through the request keeps Node from dumping it, which would read it
  // without a word; each piece is a moment to count what the socket has read.
  const discard = () => { if (socket.bytesRead > lastByte) socket.destroy() }
  request.on('data', discard)
  const disarm = () => { delete (socket as Partial<Socket>).destroySoon }
  socket.destroySoon = () => {
    disarm()
    lastByte = socket.bytesRead + bounds.bytes
    linger(socket, request, bounds)
  }
  // Node closes the connection, if it does, on the response's 'finish'; 'close' comes a tick later.
  response.once('close', disarm)
}

function linger (socket: Socket, request: IncomingMessage, bounds: LingerBounds) {
  // allowHalfOpen (as every HTTP server socket has it): the FIN ends the response, reading goes on.
  socket.end()
  if (request.complete) return socket.destroy()
  const timer = setTimeout(() => socket.destroy(), bounds.ms)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
  // The body is all in, or the client has sent all it will: nothing more to wait for.
  request.once('end', () => socket.destroy())
  socket.once('end', () => socket.destroy())
}
