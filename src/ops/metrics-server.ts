import Fastify, { type FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import { errorHandler, notFoundHandler } from '../http/errors.ts'
import { refuseOtherMethods } from '../http/method-not-allowed.ts'

/**
 * The listener Prometheus scrapes (METRICS_HOST, METRICS_PORT), apart from the API's port as
 * exporters do. Building the exposition holds the event loop for a while and names every
 * route, so it is for the monitoring network only: kept off the API's port, it needs no key,
 * no rate limit and no shedding, and clients cannot reach it through the load balancer.
 */
export function metricsServer (registry: Registry): FastifyInstance {
  // No automatic HEAD route: it would build the exposition to throw it away.
  const server = Fastify({ exposeHeadRoutes: false })
  refuseOtherMethods(server)
  server.setErrorHandler(errorHandler)
  server.setNotFoundHandler(notFoundHandler)
  const exposition = sharedBuilds(registry)
  server.get('/metrics', async (_request, reply) => {
    reply.header('cache-control', 'no-store').type(registry.contentType)
    return exposition()
  })
  server.head('/metrics', async (_request, reply) => reply.header('cache-control', 'no-store').type(registry.contentType).send())
  return server
}

/** The registry's exposition; scrapes that arrive while one is being built share it. */
function sharedBuilds (registry: Registry): () => Promise<string> {
  let building: Promise<string> | undefined
  return () => {
    building ??= registry.metrics().finally(() => { building = undefined })
    return building
  }
}
