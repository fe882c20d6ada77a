import type { FastifyInstance } from 'fastify'
import { ApiError } from '../http/errors.ts'
import type { Store } from '../store/types.ts'

export interface HealthOptions {
  store: Store
  /** With REDIS_URL: whether Redis answers. Reported by /readyz?verbose, never a reason to be unready. */
  checkRedis?: () => Promise<'up' | 'down'>
  /** True from the start of a graceful stop: the load balancer should send no more. */
  isDraining: () => boolean
}

/**
 * Liveness and readiness for load balancers and orchestrators: outside /v1, no key. Redis is
 * not part of readiness: it only holds the rate-limit counters, and while it is away every
 * instance serves uncounted; failing readiness would take the whole fleet out of the balancer.
 */
export async function healthRoutes (app: FastifyInstance, { store, checkRedis, isDraining }: HealthOptions) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get<{ Querystring: { verbose?: string } }>('/readyz', { schema: { hide: true } }, async (request) => {
    if (isDraining()) throw new ApiError('unavailable', 'The server is shutting down.')
    try {
      await store.checkReady()
    } catch (error) {
      request.log.warn({ err: error }, 'not ready: store')
      throw new ApiError('unavailable', 'The store is not reachable or not migrated')
    }
    if (request.query.verbose === undefined) return { status: 'ready' }
    return { status: 'ready', checks: { store: 'up', ...(checkRedis && { redis: await checkRedis() }) } }
  })
}
