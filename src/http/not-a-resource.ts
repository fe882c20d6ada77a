import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from './errors.ts'

/**
 * Answers 404 `not_found` for every method at a URL that names no resource but that the router
 * would otherwise hand to a route that cannot make sense of it: `/v1/pets/` reaches getPet
 * with an empty petId, whose 400 names a parameter the client never sent. A route of its own
 * also keeps it under one route template in the logs and metrics.
 *
 * Refused in the route's onRequest hook: after the scope's hooks (the bearer check, so 401
 * comes first as on every path of the scope) and before any body is read.
 */
export function notAResource (app: FastifyInstance, url: string, hint: string) {
  async function refuse (request: FastifyRequest) {
    throw new ApiError('not_found', `No route for ${request.method} ${app.prefix}${url}; ${hint}`)
  }
  app.route({ method: app.supportedMethods, url, schema: { hide: true }, onRequest: refuse, handler: refuse })
}
