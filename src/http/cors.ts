import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { CORS_EXPOSED_HEADERS } from '../contract/response-headers.ts'

/**
 * Browsers on any origin may call the API: a key travels in the Authorization header, never in
 * a cookie, so a foreign page can do nothing with it that it could not do without a browser.
 *
 * Only replies to browsers carry the CORS fields: a browser names the calling page's origin in
 * every cross-origin request, and other clients have no use for these headers. Because the
 * reply depends on Origin, every reply is marked `Vary: Origin`. A preflight (OPTIONS naming
 * Origin and Access-Control-Request-Method) is replied to here, before the bearer check (browsers
 * never send a key with one); OPTIONS without Access-Control-Request-Method is no preflight and
 * is routed like any other method (405).
 *
 * Written by hand rather than with @fastify/cors: with options that depend on the request, the
 * library copies its option objects twice on every request, more than the 5 % a library may
 * cost (docs/performance.md has the figure). What goes on the wire is the same.
 */

/** A reply to a browser: any origin may read it and the headers the API promises. */
const REPLY_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', ')
}

/**
 * The request headers a page may send that no route's header schema lists, as every request
 * may carry them: the key, declared once as the document's security scheme (bearerAuth) rather
 * than as a header of each operation; the body's media type, which a body schema does not name;
 * and the caller's request id, read for every request by http/logging.ts, not by a route.
 */
const HEADERS_OF_EVERY_REQUEST = ['Authorization', 'Content-Type', 'X-Request-Id']

/** The header names a route's schema declares (`schema.headers`, a JSON Schema object). */
function headerNamesOf (headers: unknown): string[] {
  const properties = (headers as { properties?: Record<string, unknown> } | undefined)?.properties
  return properties === undefined ? [] : Object.keys(properties)
}

/**
 * A preflight's 204, kept by the browser for ten minutes. It allows every method some API route
 * serves, as the routes were registered (method-not-allowed.ts records them), and every request
 * header their schemas declare besides those of every request; a name once, in alphabetical order.
 */
function preflightHeaders (served: FastifyInstance['servedMethods'], declaredHeaders: Iterable<string>) {
  const methods = new Set([...served].flatMap(([url, methods]) => isApiPath(url) ? [...methods] : []))
  const headers = new Map([...HEADERS_OF_EVERY_REQUEST, ...declaredHeaders].map((name) => [name.toLowerCase(), name]))
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': [...methods].sort().join(', '),
    'access-control-allow-headers': [...headers].sort(([a], [b]) => a < b ? -1 : 1).map(([, name]) => name).join(', '),
    'access-control-max-age': '600',
    // Safari wants the length of the empty body spelled out.
    'content-length': '0'
  }
}

function isApiPath (url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?')
}

const isPreflight = (request: FastifyRequest) => request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined

export const cors = fp(async function cors (app: FastifyInstance) {
  // The request headers the API routes declare, and the paths of those routes: registered
  // before the routes, as an onRoute hook sees only the routes added after it.
  const declaredHeaders = new Set<string>()
  const seen = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!isApiPath(route.url)) return
    seen.add(route.url)
    for (const name of headerNamesOf(route.schema?.headers)) declaredHeaders.add(name)
  })
  // Every route is in once the app is ready; no preflight is replied to before.
  let preflight: ReturnType<typeof preflightHeaders>
  app.addHook('onReady', async () => {
    const unseen = [...app.servedMethods.keys()].filter((url) => isApiPath(url) && !seen.has(url))
    if (unseen.length > 0) throw new Error(`cors is registered after the routes of ${unseen.join(', ')}: a preflight would not allow the headers they declare`)
    preflight = preflightHeaders(app.servedMethods, declaredHeaders)
  })
  // Set in onRequest, before the bearer check and the 503 while closing (app.ts registers it
  // ahead of both), so that every reply carries them, refusals included.
  // Callback form, as the other hooks every reply runs (http/logging.ts): no promise per reply.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('vary', 'Origin')
    if (request.headers.origin === undefined || !isApiPath(request.url)) return done()
    if (!isPreflight(request)) {
      reply.headers(REPLY_HEADERS)
      return done()
    }
    // Replied to without calling done: nothing else runs for a preflight.
    reply.code(204).headers(preflight).send()
  })
}, { name: 'cors', dependencies: ['method-not-allowed'] })
