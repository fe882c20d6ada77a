import { corsHeaders, rateLimitHeaders, retryAfter, wwwAuthenticate } from '../contract/response-headers.ts'

/**
 * The documented answers the three operations share: every answer may carry the CORS and
 * rate-limit headers, and every operation may answer the errors of authentication, limits and
 * the server itself. The bodies are the shared schemas (Pet, Pets, Error).
 */

type Headers = Record<string, unknown>

export const answer = (description: string, $ref: string, headers: Headers = {}) =>
  ({ description, headers: { ...rateLimitHeaders, ...corsHeaders, ...headers }, $ref })

export const error = (description: string, headers?: Headers) => answer(description, 'Error', headers)

export function commonErrors (extra: Headers = {}) {
  return {
    401: error('Missing or invalid API key.', { ...wwwAuthenticate, ...extra }),
    408: error('The request was not received completely within the request timeout; the connection is closed.', extra),
    429: error('Too many requests: the API key used its budget for the current minute, or this client address failed authentication too often.', { ...retryAfter, ...extra }),
    431: error('The request line and header fields are larger than the server accepts; the connection is closed.', extra),
    500: error('The request failed on the server; the message carries the request id. Never a stack trace.', extra),
    503: error('The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds.', { ...retryAfter, ...extra })
  }
}
