import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { ContextConfigDefault, FastifySchema, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault, RouteGenericInterface, RouteOptions } from 'fastify'
import { corsHeaders, rateLimitHeaders, retryAfter, wwwAuthenticate } from '../contract/response-headers.ts'
import type { KeyScope } from '../store/types.ts'

/** The facts the app reads off an operation's route: the key scope it needs, and whether its replies may be kept. */
export interface OperationConfig {
  /** A write route refuses read keys with 403 before the body is read (auth/bearer.ts). */
  scope: KeyScope
  /** Its replies can never change, so the reply cache may keep them (reply-cache.ts). */
  cacheable: boolean
  /** It changes or removes a pet that exists: refused while the reply cache is on. */
  changesPets?: boolean
}

/** What each operation module makes: one route, as Fastify registers it, typed by its own schema. */
export type Operation<S extends FastifySchema = FastifySchema> = RouteOptions<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RouteGenericInterface, ContextConfigDefault, S, TypeBoxTypeProvider
> & { config: OperationConfig }

/**
 * The documented responses the three operations share: every reply may carry the CORS and
 * rate-limit headers, and every operation may reply with the errors of authentication, limits
 * and the server itself. The bodies are the shared schemas (Pet, Pets, Error).
 */

type Headers = Record<string, unknown>

export const response = (description: string, $ref: string, headers: Headers = {}) =>
  ({ description, headers: { ...rateLimitHeaders, ...corsHeaders, ...headers }, $ref })

export const error = (description: string, headers?: Headers) => response(description, 'Error', headers)

/** The 304 of a conditional read: no body, the header fields of the 200 it stands for. */
export const notModified = (headers: Headers) => ({
  description: 'Not Modified: `If-None-Match` names the current reply (its `ETag`). No body; the header fields the 200 would carry, so that the client\'s cache can update what it stored. Not counted against the API key\'s rate limit.',
  type: 'null',
  headers: { ...rateLimitHeaders, ...corsHeaders, ...headers }
})

export function commonErrors (extra: Headers = {}) {
  return {
    401: error('Missing or invalid API key.', { ...wwwAuthenticate, ...extra }),
    408: error('The request was not received completely within the request timeout; the connection is closed.', extra),
    429: error('Too many requests: the API key reached its limit for the current minute, or this client address failed authentication too often.', { ...retryAfter, ...extra }),
    431: error('The request line and header fields are larger than the server accepts; the connection is closed.', extra),
    500: error('The request failed on the server; the message carries the request id. Never a stack trace.', extra),
    503: error('The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds.', { ...retryAfter, ...extra })
  }
}
