import { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import helmet from 'helmet'

// Node's module itself, not an ESM import: an import reads every export, and node:http's lazy
// WebSocket exports then load Node's whole bundled undici, which the server never uses.
const http = process.getBuiltinModule('node:http')

type Middleware = ReturnType<typeof helmet>

/**
 * The headers a helmet middleware sets. They are the same on every reply, so they are recorded
 * once at start-up and copied onto replies, instead of running helmet on every request as
 * @fastify/helmet does.
 */
function headersSetBy (middleware: Middleware): Record<string, string> {
  const request = new http.IncomingMessage(new Socket())
  const response = new http.ServerResponse(request)
  middleware(request, response, () => {})
  return Object.fromEntries(Object.entries(response.getHeaders()).map(([name, value]) => [name, String(value)]))
}

/**
 * Headers for a JSON API (OWASP REST Security Cheat Sheet): no content sniffing, no framing, no
 * referrer, no embedding by other sites. Helmet's other defaults are off: they concern HTML
 * documents (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control, X-Download-Options,
 * X-Permitted-Cross-Domain-Policies, X-XSS-Protection), and Strict-Transport-Security belongs
 * to the proxy where TLS ends.
 */
export const SECURITY_HEADERS = headersSetBy(helmet({
  contentSecurityPolicy: false,
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false
}))

/** Only for JSON: an HTML page (the docs page) brings its own policy. */
const JSON_CONTENT_SECURITY_POLICY = headersSetBy(helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] }
}))

/**
 * What an Error reply carries when it is sent outside the hooks (client-errors.ts): the same
 * headers the onSend hook below gives every JSON reply. Nothing is cached: replies carry pets
 * and are fetched with a key.
 */
export const ERROR_REPLY_HEADERS: Record<string, string> = { ...SECURITY_HEADERS, 'cache-control': 'no-store', ...JSON_CONTENT_SECURITY_POLICY }

export const securityHeaders = fp(async function securityHeaders (app: FastifyInstance) {
  // Callback form, as the other hooks every reply runs (http/logging.ts): no promise per reply.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS)
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type.startsWith('application/json') && !reply.hasHeader('content-security-policy')) {
      reply.headers(JSON_CONTENT_SECURITY_POLICY)
    }
    done(null, payload)
  })
}, { name: 'security-headers' })
