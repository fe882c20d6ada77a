import { Readable } from 'node:stream'
import type { preParsingHookHandler } from 'fastify'

/**
 * The body stream Fastify reads for a request that has no body.
 *
 * Node ends the body stream of a request without Content-Length or Transfer-Encoding at once,
 * without its events (optimizeEmptyRequests, http/client-connections.ts): such a request has no body
 * (RFC 9112 section 6.3). Fastify still reads a body when Content-Type is set, and would wait
 * for an 'end' that never comes. This hook hands it an empty stream instead, so the request is
 * replied to as the same request with Content-Length: 0 is.
 *
 * A route-level hook, on the one route that parses a body (the create; an unknown path is
 * replied to before its body is read): a preParsing hook on every request would cost most of
 * what the option saves.
 */
export const emptyBody: preParsingHookHandler = (request, _reply, payload, done) => {
  done(null, request.raw.readableEnded ? Readable.from([]) : payload)
}
