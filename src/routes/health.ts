import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.ts'
import type { Store } from '../store/types.ts'

export interface HealthOptions { store: Store }

/** Liveness and readiness for load balancers and orchestrators: outside /v1, no key. */
export async function healthRoutes (app: FastifyInstance, { store }: HealthOptions) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    try {
      await store.checkReady()
    } catch (error) {
      request.log.warn({ err: error }, 'not ready')
      throw new ApiError('unavailable', 'The store is not reachable or not migrated.')
    }
    return { status: 'ready' }
  })
}
