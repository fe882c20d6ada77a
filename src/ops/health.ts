import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Gauge } from 'prom-client'
import { ApiError } from '../http/errors.ts'
import { StorageConditionError } from '../store/errors.ts'
import type { Store } from '../store/types.ts'

export interface HealthOptions {
  store: Store
  /** With REDIS_URL: whether Redis answers. Reported by /readyz?verbose, never a reason to be unready. */
  checkRedis?: () => Promise<'up' | 'down'>
  /** True from the start of a graceful stop: the load balancer should send no more. */
  isDraining: () => boolean
  /** petstore_ready: set from the same check as /readyz, on a timer and on each /readyz. */
  ready?: Gauge
}

// Often enough for an alert to see a change within a scrape or two.
const READINESS_CHECK_MS = 5000

/**
 * Liveness and readiness for load balancers and orchestrators: outside /v1, no key. Redis is
 * not part of readiness: it only holds the rate-limit counters, and while it is away every
 * instance serves uncounted; failing readiness would take the whole fleet out of the balancer.
 */
export async function healthRoutes (app: FastifyInstance, options: HealthOptions) {
  // One line when writes start failing for a condition of the storage (disk full, read-only,
  // I/O error), one when they work again; the requests failed in between log nothing more.
  options.store.watchWrites((failure) => {
    if (failure) app.log.error({ reason: failure.message }, 'store writes are failing: answering 503 until one succeeds')
    else app.log.info('store writes work again')
  })

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get<{ Querystring: { verbose?: string } }>('/readyz', { schema: { hide: true } }, async (request) => {
    const problem = await notReadyBecause(options, request.log)
    options.ready?.set(problem === undefined ? 1 : 0)
    if (problem !== undefined) throw problem
    if (request.query.verbose === undefined) return { status: 'ready' }
    return { status: 'ready', checks: { store: 'up', ...(options.checkRedis && { redis: await options.checkRedis() }) } }
  })

  if (options.ready) reportReadiness(app, options, options.ready)
}

/** Why the instance is not ready, as /readyz answers it; undefined when it is ready. */
async function notReadyBecause ({ store, isDraining }: HealthOptions, log: FastifyBaseLogger | undefined): Promise<Error | undefined> {
  if (isDraining()) return new ApiError('unavailable', 'The server is shutting down.')
  try {
    await store.checkReady()
  } catch (error) {
    // Logged once, when writes started failing (above); its 503 is not logged again per check.
    if (error instanceof StorageConditionError) return error
    log?.warn({ err: error }, 'not ready: store')
    return new ApiError('unavailable', 'The store is not reachable or not migrated')
  }
  return undefined
}

/**
 * Keeps petstore_ready current whether or not anything asks /readyz: checked once before the
 * app is ready, then every READINESS_CHECK_MS, one check at a time. A change is logged once,
 * not every check.
 */
function reportReadiness (app: FastifyInstance, options: HealthOptions, ready: Gauge) {
  let timer: NodeJS.Timeout | undefined
  let checking = false
  let wasReady: boolean | undefined
  const check = async () => {
    if (checking) return
    checking = true
    try {
      // The cause is logged only when readiness is lost, not on every failing check.
      const problem = await notReadyBecause(options, wasReady === false ? undefined : app.log)
      const isReady = problem === undefined
      ready.set(isReady ? 1 : 0)
      if (wasReady === false && isReady) app.log.info('ready again')
      wasReady = isReady
    } finally {
      checking = false
    }
  }
  app.addHook('onReady', async () => {
    await check()
    timer = setInterval(check, READINESS_CHECK_MS).unref()
  })
  app.addHook('onClose', async () => { clearInterval(timer) })
}
