import type { FastifyRequest } from 'fastify'

// A host name, IPv4 or [IPv6] literal, and an optional port: nothing that could end a URI.
const PLAIN_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/

/**
 * The base address incl. /v1 for Link and Location: PUBLIC_URL, else the request's own host.
 * A Host header that is not a plain host[:port] is never echoed (it could inject links into
 * replies that caches keep); the reply then uses the relative /v1.
 */
export function baseUrl (request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl
  return PLAIN_HOST.test(request.host) ? `${request.protocol}://${request.host}/v1` : '/v1'
}
