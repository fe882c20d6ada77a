import assert from 'node:assert/strict'
import type { ErrorBody, ErrorCode } from '../../src/contract/schemas.ts'

export type { ErrorCode }

/**
 * The one assertion on an Error body. Every test that checks an error reply goes through it,
 * so that a field added to every Error body changes the builder in src/ and this file only.
 */

/** The type every Error body is sent with, by the error handler and on the raw socket alike. */
export const ERROR_TYPE = 'application/json; charset=utf-8'

/**
 * A reply as the tests hold it: app.inject's response (statusCode), the raw-http exchange
 * (status), or a fetch Response read by fetchedReply.
 */
export interface ErrorReply {
  statusCode?: number
  status?: number
  headers: Headers | Record<string, unknown>
  body: string
}

export type ErrorDetails = NonNullable<ErrorBody['details']>

/** What a table of cases expects of an error reply: the arguments of assertError. */
export interface ExpectedError {
  status: number
  code: ErrorCode
  message: string | RegExp
  details?: ErrorDetails
}

export interface AssertErrorOptions {
  /** The details the body must carry; without them, the body must have none. */
  details?: ErrorDetails
  /** Said when the assertion fails, to tell apart the cases of a loop. */
  label?: string
  /** The Content-Type of a reply the service does not make: haproxy's own say application/json. */
  type?: string
}

/** A fetch Response as assertError takes it: its body read as text. */
export async function fetchedReply (response: Response): Promise<ErrorReply & { status: number }> {
  return { status: response.status, headers: response.headers, body: await response.text() }
}

/**
 * Asserts the status, the JSON content type, and the whole Error body: {code, message, status},
 * plus details when given, and nothing else. A RegExp message is for messages that carry a
 * generated value (a request id); the other fields and the set of keys are still exact.
 */
export function assertError (reply: ErrorReply, status: number, code: ErrorCode, message: string | RegExp, options: AssertErrorOptions = {}): void {
  const { details, label, type = ERROR_TYPE } = options
  const actual = { status: reply.statusCode ?? reply.status, type: headerOf(reply.headers, 'content-type'), body: undefined as unknown }
  try {
    actual.body = JSON.parse(reply.body)
  } catch {
    assert.fail(`the Error body is not JSON: ${actual.status} ${String(actual.type)} ${JSON.stringify(reply.body)}${label === undefined ? '' : ` (${label})`}`)
  }
  const expected: Record<string, unknown> = { code, message, status }
  if (details !== undefined) expected.details = details
  const sent = actual.body as Record<string, unknown> | null
  // A RegExp is matched below; the deep equality then checks every other field and the keys.
  if (message instanceof RegExp && typeof sent?.message === 'string') expected.message = sent.message
  assert.deepEqual(actual, { status, type, body: expected }, label)
  if (message instanceof RegExp) assert.match(sent!.message as string, message, label)
}

/**
 * assertError as a question, for loops under load that collect the replies they did not
 * expect rather than stop at the first: true when the reply is that Error, whole.
 */
export function isError (reply: ErrorReply, status: number, code: ErrorCode, message: string | RegExp, options: AssertErrorOptions = {}): boolean {
  try {
    assertError(reply, status, code, message, options)
    return true
  } catch (error) {
    if (error instanceof assert.AssertionError) return false
    throw error
  }
}

/**
 * The Error body alone, for a reply whose status and headers the test does not see (what a
 * shell recipe prints of a curl call): the whole body, as assertError checks it.
 */
export function assertErrorBody (body: string, status: number, code: ErrorCode, message: string | RegExp, options: AssertErrorOptions = {}): void {
  assertError({ status, headers: { 'content-type': ERROR_TYPE }, body }, status, code, message, options)
}

function headerOf (headers: ErrorReply['headers'], name: string): unknown {
  return headers instanceof Headers ? headers.get(name) : headers[name]
}
