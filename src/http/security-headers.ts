import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Headers for a JSON API (OWASP REST Security Cheat Sheet): no content sniffing, no framing,
 * no referrer, and nothing kept by caches unless a route says otherwise: answers carry pets
 * and are fetched with a key.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin'
}

/** Only for JSON: an HTML page (a docs page) brings its own policy. */
const JSON_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'"

export const securityHeaders = fp(async function securityHeaders (app: FastifyInstance) {
  // Callback form: no promise per request.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS)
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type.startsWith('application/json') && !reply.hasHeader('content-security-policy')) {
      reply.header('content-security-policy', JSON_CONTENT_SECURITY_POLICY)
    }
    done(null, payload)
  })
}, { name: 'security-headers' })
