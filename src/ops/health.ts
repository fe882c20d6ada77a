import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { ApiError } from '../http/errors.ts'
import type { Store } from '../store/types.ts'

export interface HealthOptions {
  store: Store
  redis?: Redis
  /** True from the start of a graceful stop: the load balancer should send no more. */
  isDraining: () => boolean
}

/** Liveness and readiness for load balancers and orchestrators: outside /v1, no key. */
export async function healthRoutes (app: FastifyInstance, { store, redis, isDraining }: HealthOptions) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    if (isDraining()) throw new ApiError('unavailable', 'The server is shutting down.')
    try {
      await store.checkReady()
    } catch (error) {
      request.log.warn({ err: error }, 'not ready: store')
      throw new ApiError('unavailable', 'The store is not reachable or not migrated')
    }
    if (redis) {
      try {
        await redis.ping()
      } catch (error) {
        request.log.warn({ err: error }, 'not ready: redis')
        throw new ApiError('unavailable', 'Redis is not reachable')
      }
    }
    return { status: 'ready' }
  })
}
