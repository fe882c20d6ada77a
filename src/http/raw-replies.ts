import type { Socket } from 'node:net'
import { errorJson } from './error-body.ts'
import { ERROR_REPLY_HEADERS } from './security-headers.ts'
import { ERROR_CODES, type ErrorCode } from '../contract/schemas.ts'

// Not imported: an ESM import of node:http reads every export it has, and its lazy WebSocket
// exports then load Node's whole bundled undici, which the server never uses.
const { STATUS_CODES } = process.getBuiltinModule('node:http')

/** The headers the onSend hooks give every JSON response (security-headers.ts), as lines of a raw one. */
const HEADER_LINES = Object.entries(ERROR_REPLY_HEADERS).map(([name, value]) => `${name}: ${value}`)

/**
 * An Error response and the end of the connection, written as bytes: for a connection that has
 * no request object to reply through (the parser refused its bytes, or it is closed before its
 * request is complete).
 */
export function replyAndClose (socket: Socket, code: ErrorCode, message: string, extraHeaderLines: string[] = []) {
  if (!socket.writable) return closeWhenSent(socket)
  const text = errorJson(code, message, undefined)
  const status = ERROR_CODES[code]
  closeWhenSent(socket, [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...HEADER_LINES,
    ...extraHeaderLines,
    'Connection: close',
    '',
    text
  ].join('\r\n'))
}

/**
 * Ends the connection once what was written to it has been sent. end() alone would wait for the
 * client's FIN: an HTTP server socket allows half-open connections.
 */
export function closeWhenSent (socket: Socket, lastBytes?: string) {
  const close = () => socket.destroy()
  if (lastBytes === undefined) socket.end(close)
  else socket.end(lastBytes, close)
}
