import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Browsers on any origin may call the API: a key travels in the Authorization header, never in
 * a cookie, so a foreign page can do nothing with it that it could not do without a browser.
 * Preflights are answered here, before routing, and need no key (browsers never send one).
 * Answers carry the CORS fields when the request names an Origin, as browsers' requests do.
 */
export const CORS_EXPOSED_HEADERS = [
  'Location', 'Link', 'Deprecation', 'Sunset', 'Retry-After', 'RateLimit', 'RateLimit-Policy',
  'Idempotent-Replayed', 'WWW-Authenticate', 'X-Request-Id'
]
const EXPOSED_HEADERS = CORS_EXPOSED_HEADERS.join(', ')
const PREFLIGHT_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST',
  'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, X-Request-Id',
  'access-control-max-age': '600'
}

function isApiPath (url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?')
}

export const cors = fp(async function cors (app: FastifyInstance) {
  // Callback-form hooks: no promise per request. A hook that answers does not call done.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS' && isApiPath(request.url) && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined) {
      reply.code(204).headers(PREFLIGHT_HEADERS).send()
      return
    }
    done()
  })
  // Only answers to browsers carry the CORS fields: a browser names the calling page's origin
  // in every cross-origin request, and other clients have no use for 300 bytes of headers.
  // Nothing is cached (Cache-Control: no-store), so no cache can hand one kind to the other.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.headers.origin !== undefined && isApiPath(request.url) && !reply.hasHeader('access-control-allow-origin')) {
      reply.header('access-control-allow-origin', '*')
      reply.header('access-control-expose-headers', EXPOSED_HEADERS)
    }
    done(null, payload)
  })
}, { name: 'cors' })
