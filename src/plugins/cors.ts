import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Browsers on any origin may call the API: a key travels in the Authorization header, never in
 * a cookie, so a foreign page can do nothing with it that it could not do without a browser.
 * Preflights are answered here, before routing, and need no key (browsers never send one).
 */
export const CORS_EXPOSED_HEADERS = [
  'Location', 'Link', 'Deprecation', 'Sunset', 'Retry-After', 'RateLimit', 'RateLimit-Policy',
  'Idempotent-Replayed', 'WWW-Authenticate', 'X-Request-Id'
]
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
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'OPTIONS' || !isApiPath(request.url)) return
    if (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) return
    return reply.code(204).headers(PREFLIGHT_HEADERS).send()
  })
  app.addHook('onSend', async (request, reply) => {
    if (!isApiPath(request.url) || reply.hasHeader('access-control-allow-origin')) return
    reply.header('access-control-allow-origin', '*')
    reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS.join(', '))
  })
}, { name: 'cors' })
