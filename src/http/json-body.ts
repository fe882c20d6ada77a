import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { INT64_MAX, INT64_MIN } from '../contract/schemas.ts'
import { ApiError, invalidRequest } from './errors.ts'

/**
 * JSON.parse alone turns 9223372036854775807 into 9223372036854775808: a double cannot hold
 * it. So every number written as an integer literal is read as a bigint, from its source text
 * (Node 24's reviver context); a number written with a fraction or an exponent stays a number,
 * which int64 fields refuse. A literal of more than 19 digits lies beyond any int64: it becomes
 * the bigint just past the range on its side, as out of range as the value sent, since reading
 * thousands of digits as a bigint would cost far more than the body is worth.
 */
const INT64_LITERAL = /^-?\d{1,19}$/
const LONG_INTEGER_LITERAL = /^-?\d{20,}$/
const PAST_INT64_MAX = INT64_MAX + 1n
const PAST_INT64_MIN = INT64_MIN - 1n

interface ReviverContext { source?: string }

function reviver (key: string, value: unknown, context?: ReviverContext): unknown {
  if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) {
    throw invalidRequest('The request body contains a forbidden property name (__proto__ or constructor.prototype).')
  }
  if (typeof value !== 'number' || context?.source === undefined) return value
  if (INT64_LITERAL.test(context.source)) return BigInt(context.source)
  if (LONG_INTEGER_LITERAL.test(context.source)) return context.source.startsWith('-') ? PAST_INT64_MIN : PAST_INT64_MAX
  return value
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i

/** JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread, so it is refused. */
export function assertUtf8 (contentType: string | undefined): void {
  const charset = contentType === undefined ? undefined : CHARSET.exec(contentType)?.[1]
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ApiError('unsupported_media_type', `The request body must be UTF-8 JSON; charset=${charset} is not supported.`)
  }
}

// fatal: a byte sequence that is not UTF-8 is refused (RFC 8259 section 8.1) rather than
// replaced by U+FFFD, which would store a name other than the one sent. ignoreBOM keeps a
// byte order mark in the text, where JSON.parse refuses it as before.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function decodeUtf8 (body: Buffer): string {
  try {
    return UTF8.decode(body)
  } catch {
    throw invalidRequest('The request body is not valid UTF-8.')
  }
}

/** A request body's bytes as a JSON value: UTF-8 only, integer literals as bigints. */
export function parseJsonBytes (body: Buffer): unknown {
  return parseJsonBody(decodeUtf8(body))
}

/** The text as a JSON value whose integer literals are bigints (see above). */
export function parseJsonBody (text: string): unknown {
  if (text.trim() === '') throw invalidRequest('The request body is empty; a JSON object is required.')
  try {
    return JSON.parse(text, reviver)
  } catch (error) {
    if (error instanceof SyntaxError) throw invalidRequest(`The request body is not valid JSON: ${error.message}`)
    // Thousands of nested arrays fit in the body limit and overflow the stack of the reviver.
    if (error instanceof RangeError) throw invalidRequest('The request body is nested too deeply.')
    throw error
  }
}

/**
 * The one body parser: application/json, UTF-8, integers exact. Synchronous, so that what it
 * throws (415, 400) Fastify hands to the error handler like any other refusal.
 */
export const jsonBodies = fp(async function jsonBodies (app: FastifyInstance) {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser<Buffer>('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    assertUtf8(request.headers['content-type'])
    done(null, parseJsonBytes(body))
  })
}, { name: 'json-bodies' })
