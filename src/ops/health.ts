import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { ApiError } from '../http/errors.ts'
import { StorageConditionError } from '../store/errors.ts'
import type { Store } from '../store/types.ts'

export interface HealthOptions {
  store: Store
  redis?: Redis
  /** True from the start of a graceful stop: the load balancer should send no more. */
  isDraining: () => boolean
}

/** Liveness and readiness for load balancers and orchestrators: outside /v1, no key. */
export async function healthRoutes (app: FastifyInstance, { store, redis, isDraining }: HealthOptions) {
  // One line when writes start failing for a condition of the storage (disk full, read-only,
  // I/O error), one when they work again; the requests failed in between log nothing more.
  store.watchWrites((failure) => {
    if (failure) app.log.error({ reason: failure.message }, 'store writes are failing: answering 503 until one succeeds')
    else app.log.info('store writes work again')
  })

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    if (isDraining()) throw new ApiError('unavailable', 'The server is shutting down.')
    try {
      await store.checkReady()
    } catch (error) {
      // Logged once, when writes started failing (above); not again on every probe.
      if (error instanceof StorageConditionError) throw error
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
