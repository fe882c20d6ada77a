import { ERROR_CODES, ERROR_DETAILS_MAX, ERROR_MESSAGE_MAX, type ErrorBody, type ErrorCode } from '../contract/schemas.ts'

/**
 * The one place an Error body is made, whichever way it leaves: through the error handler and
 * the response schema (errors.ts), serialized once at start for the 401 the bearer check sends
 * itself (auth/bearer.ts), or written as bytes to a socket that has no request object
 * (raw-replies.ts). Every caller hands in the request id it has, so that what the body carries
 * is decided here alone.
 */

export interface ErrorDetail { field: string, message: string }

/** Messages can quote the request (a path, a parser's complaint): cut them to the documented bound. */
function bounded (text: string, max: number): string {
  // A string of at most max UTF-16 units has at most max code points: nothing to count.
  if (text.length <= max) return text
  const chars = [...text]
  return chars.length <= max ? text : chars.slice(0, max - 1).join('') + '…'
}

/** The most characters of client input (a path, a header value) that a message quotes. */
const INPUT_ECHO_MAX = 200

/** Client input as a message quotes it: at most INPUT_ECHO_MAX characters, cut with an ellipsis. */
export function echoed (input: string): string {
  return bounded(input, INPUT_ECHO_MAX)
}

/**
 * The Error body of a reply. `requestId` is the request's (undefined for a connection refused
 * before it had one): the body names it only where the message does, in server errors, and
 * every reply carries it in X-Request-Id.
 */
export function errorBody (code: ErrorCode, message: string, requestId: string | undefined, details?: ErrorDetail[]): ErrorBody {
  const body: ErrorBody = { code, message: bounded(message, ERROR_MESSAGE_MAX), status: ERROR_CODES[code] }
  if (details && details.length > 0) {
    body.details = details.slice(0, ERROR_DETAILS_MAX).map((d) => ({ field: bounded(d.field, 100), message: bounded(d.message, 500) }))
  }
  return body
}

/** The Error body as JSON text, for a reply written without the response schema. */
export function errorJson (code: ErrorCode, message: string, requestId: string | undefined): string {
  return JSON.stringify(errorBody(code, message, requestId))
}

/**
 * The JSON of an Error body that is the same for every request, made once: for a refusal so
 * frequent that serializing it each time would show (the 401). Asked with the request id like
 * errorJson, so that a body that one day names it is made here too.
 */
export function fixedErrorJson (code: ErrorCode, message: string): (requestId: string) => string {
  const json = errorJson(code, message, undefined)
  return () => json
}
