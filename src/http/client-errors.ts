import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { responseBegun } from './client-connections.ts'
import { ApiError, errorHandler } from './errors.ts'
import { closeWhenSent, replyAndClose } from './raw-replies.ts'
import { ERROR_REPLY_HEADERS } from './security-headers.ts'
import type { ErrorCode } from '../contract/schemas.ts'

/**
 * Responses that Fastify 5 sends without passing through setErrorHandler: requests the HTTP
 * parser rejects before there is a request at all (Node's 'clientError' event), and URLs the
 * router cannot decode. They get the Error body like every other response.
 */

const PARSER_ERRORS: Record<string, [ErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request was not received completely in time.'],
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'The request line and header fields are larger than the limit.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['payload_too_large', 'The chunk extensions of the body are larger than the limit.']
}
const NOT_HTTP: [ErrorCode, string] = ['invalid_request', 'The request is not valid HTTP/1.1.']

/** Written straight to the socket: there is no request object to reply through. */
export function clientErrorHandler (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [code, message] = PARSER_ERRORS[error.code ?? ''] ?? NOT_HTTP
  this.log.info({ code, reason: error.code ?? error.message }, 'request rejected by the HTTP parser')
  // Never write into the middle of a response that has already begun on this connection.
  if (responseBegun(socket)) closeWhenSent(socket)
  else replyAndClose(socket, code, message)
}

/**
 * CONNECT asks for a tunnel, which this service does not give: 405 with the Error body. Node
 * hands such a request to the server's 'connect' listeners and, when there is none, closes the
 * connection without a word. An empty Allow says that the target allows no method.
 */
export const refuseConnect = fp(async function refuseConnect (app: FastifyInstance) {
  app.server.on('connect', (_request: unknown, socket: Socket) => {
    app.log.info({ code: 'method_not_allowed', method: 'CONNECT' }, 'request rejected: CONNECT')
    replyAndClose(socket, 'method_not_allowed', 'CONNECT is not allowed: this service is not a proxy.', ['Allow: '])
  })
}, { name: 'refuse-connect' })

/** Errors of the router (undecodable URL, overlong path parameter): a 400 like any bad path. */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Sent before routing, so no onSend hook adds these.
  reply.headers(ERROR_REPLY_HEADERS)
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return errorHandler(new ApiError('invalid_request', 'The request path is not a valid URL path for this service.'), request, reply)
  }
  return errorHandler(error, request, reply)
}
