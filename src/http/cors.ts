import type { FastifyCorsOptions } from '@fastify/cors'
import type { FastifyRequest } from 'fastify'
import { CORS_EXPOSED_HEADERS } from '../contract/response-headers.ts'

/**
 * Browsers on any origin may call the API: a key travels in the Authorization header, never in
 * a cookie, so a foreign page can do nothing with it that it could not do without a browser.
 * Preflights are answered in @fastify/cors's onRequest hook, before the bearer check (browsers
 * never send a key with them).
 */

/** An answer to a browser: any origin may read it and the headers the API promises. */
const ANSWER: FastifyCorsOptions = { origin: '*', exposedHeaders: CORS_EXPOSED_HEADERS.join(', '), preflight: false }
/** A preflight (OPTIONS naming Origin and Access-Control-Request-Method): 204, kept by the browser for ten minutes. */
const PREFLIGHT: FastifyCorsOptions = {
  origin: '*',
  methods: 'GET, HEAD, POST',
  allowedHeaders: 'Authorization, Content-Type, Idempotency-Key, X-Request-Id',
  maxAge: 600
}
const NONE: FastifyCorsOptions = { origin: false }

function isApiPath (url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?')
}

/**
 * Only answers to browsers carry the CORS fields: a browser names the calling page's origin in
 * every cross-origin request, and other clients have no use for these headers. Because the
 * answer depends on Origin, @fastify/cors marks every answer `Vary: Origin`. OPTIONS without
 * Access-Control-Request-Method is no preflight: it is routed like any other method (405).
 */
function corsOptionsOf (request: FastifyRequest): FastifyCorsOptions {
  if (request.headers.origin === undefined || !isApiPath(request.url)) return NONE
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined ? PREFLIGHT : ANSWER
}

/** The options of @fastify/cors. The callback form of the delegator answers in the same tick; the promise form costs a microtask per request. */
export const corsOptions: FastifyCorsOptions = {
  delegator: (request, callback) => { callback(null, corsOptionsOf(request)) }
}
