import createError from '@fastify/error'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { BODY_LIMIT_TEXT, ERROR_CODES, type ErrorBody, type ErrorCode } from '../contract/schemas.ts'
import { echoed, errorBody, type ErrorDetail } from './error-body.ts'
import { StorageFailureError, StoreUnavailableError } from '../store/store-errors.ts'

/**
 * The base of ApiError: an Error (Fastify sends it to the error handler) made without capturing
 * a stack. An ApiError is a reply, not a fault: its stack would never be read, and capturing one
 * on every 401 or 404 is a measurable part of sending it. The code and status it is made with
 * are replaced by each ApiError's own.
 */
const StacklessError = createError<string, number, [message: string]>('PETSTORE_API_ERROR', '%s', 500, Error, false)

/** An error the service means to send: its code fixes the HTTP status. */
export class ApiError extends StacklessError {
  declare readonly code: ErrorCode
  declare readonly statusCode: number
  readonly details?: ErrorDetail[]
  readonly headers?: Record<string, string>

  constructor (code: ErrorCode, message: string, options: { details?: ErrorDetail[], headers?: Record<string, string> } = {}) {
    super(message)
    this.name = 'ApiError'
    this.code = code
    this.statusCode = ERROR_CODES[code]
    this.details = options.details
    this.headers = options.headers
  }
}

export const invalidRequest = (message: string, details?: ErrorDetail[]) =>
  new ApiError('invalid_request', message, details ? { details } : {})

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(ERROR_CODES).map(([code, status]) => [status, code as ErrorCode])
)

/** Fastify's own errors for request bodies, translated into the service's words. */
const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: `The request body is larger than the limit of ${BODY_LIMIT_TEXT}.`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'The request body must be application/json.',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'The Content-Length header does not match the body.'
}

/**
 * Turns anything thrown into the Error body. Client errors say what was wrong; server errors
 * say only that something failed and which request it was, and the detail goes to the log.
 */
export function toErrorBody (error: FastifyError | ApiError, requestId: string): ErrorBody {
  // The database's name and the driver's words stay in the log.
  if (error instanceof StoreUnavailableError) return errorBody('unavailable', `The store is unavailable; retry later (request id ${requestId}).`, requestId)
  if (error instanceof ApiError) {
    if (error.statusCode >= 500) return errorBody(error.code, `${error.message} (request id ${requestId})`, requestId)
    return errorBody(error.code, error.message, requestId, error.details)
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500
  if (status >= 400 && status < 500) {
    const code = CODE_BY_STATUS.get(status) ?? 'invalid_request'
    // Fastify's and Node's words can quote the request.
    const message = FRAMEWORK_MESSAGES[error.code] ?? (code === 'invalid_request' ? echoed(error.message) : defaultMessage(code))
    return errorBody(code, message, requestId)
  }
  if (status === 503) return errorBody('unavailable', `The service is unavailable; retry later (request id ${requestId}).`, requestId)
  return errorBody('internal', `The request failed on the server (request id ${requestId}).`, requestId)
}

function defaultMessage (code: ErrorCode): string {
  return code.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase()) + '.'
}

export function errorHandler (error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  const body = toErrorBody(error, request.id)
  logFailure(error, body, request)
  if (error instanceof ApiError && error.headers) reply.headers(error.headers)
  // An outage is usually short: one retry a second later is what a client should try.
  if (error instanceof StoreUnavailableError) reply.header('retry-after', '1')
  if (body.status === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', 'Bearer realm="petstore"')
  return reply.code(body.status).type('application/json').send(body)
}

/** Every error a route, hook or parser throws becomes the Error body, through errorHandler. */
export const errorReplies = fp(async function errorReplies (app: FastifyInstance) {
  app.setErrorHandler(errorHandler)
}, { name: 'error-replies' })

function logFailure (error: FastifyError | ApiError, body: ErrorBody, request: FastifyRequest) {
  // A full disk, a read-only or failing storage: logged once when writes start failing and once
  // when they work again (ops/health.ts), not for each request it fails meanwhile.
  if (error instanceof StorageFailureError) return
  if (error instanceof ApiError && error.code === 'unavailable') {
    // Refused on purpose (overload, shutdown, store down): a state to watch, not a bug.
    request.log.warn({ code: body.code, reason: error.message }, 'request refused')
  } else if (body.status >= 500) {
    request.log.error({ err: error }, 'request failed')
  } else if (!(error instanceof ApiError)) {
    request.log.info({ code: body.code, reason: error.message }, 'request rejected')
  }
}

export function notFoundHandler (request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send(errorBody('not_found', `No route for ${request.method} ${echoed(request.url.split('?')[0]!)}.`, request.id))
}

/**
 * An unknown path is replied to in onRequest, once the hooks before it (the public routes'
 * rate limit) have run: no body it is sent is read, so a body never turns its 404 into a 400, 413
 * or 415, as a wrong method's 405 never is either.
 */
export const notFoundBeforeBody: onRequestHookHandler = (request, reply, done) => {
  if (request.is404) notFoundHandler(request, reply)
  else done()
}
