import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Gauge } from 'prom-client'
import { ApiError } from '../http/errors.ts'
import { StorageFailureError } from '../store/store-errors.ts'
import type { Store } from '../store/types.ts'

interface HealthOptions {
  store: Store
  /**
   * With REDIS_URL: whether Redis responds. Reported by /readyz?verbose, never a reason to be
   * unready; asked one at a time, and answered from a result at most READINESS_FRESH_MS old.
   */
  checkRedis?: () => Promise<'up' | 'down'>
  /** True from the start of a graceful stop: the load balancer should send no more. */
  isDraining: () => boolean
  /** petstore_ready: set from the same check as /readyz, on a timer and on each /readyz. */
  ready?: Gauge
}

// Often enough for an alert to see a change within a scrape or two.
const READINESS_CHECK_MS = 5000

/**
 * How long a check of the store stands for /readyz, and a check of Redis for /readyz?verbose:
 * a flood of probes then costs a few checks a second, not one each, and a probe waits no
 * longer than for one check.
 */
export const READINESS_FRESH_MS = 250

/**
 * Liveness and readiness for load balancers and orchestrators: outside /v1, no key. Redis is
 * not part of readiness: it only holds the rate-limit counters, and while it is away every
 * instance serves uncounted; failing readiness would take the whole fleet out of the balancer.
 */
export const healthRoutes = fp(async function healthRoutes (app: FastifyInstance) {
  const options: HealthOptions = { store: app.store, checkRedis: app.redisBreaker?.check, isDraining: () => app.isDraining(), ready: app.metrics.ready }
  const readiness = new Readiness(options, app.log)
  const checkRedis = options.checkRedis && sharedCheck(options.checkRedis, READINESS_FRESH_MS)
  // One line when writes start failing for a storage failure (disk full, read-only,
  // I/O error), one when they work again; the requests failed in between log nothing more.
  // Not ready at once: the balancer should stop sending writes that cannot succeed.
  options.store.watchWrites((failure) => {
    if (failure) app.log.error({ reason: failure.message }, 'store writes are failing: replying 503 until one succeeds')
    else app.log.info('store writes work again')
    readiness.writesChanged(failure)
  })

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get<{ Querystring: { verbose?: string } }>('/readyz', { schema: { hide: true } }, async (request) => {
    const problem = await readiness.problem()
    if (problem !== undefined) throw problem
    if (request.query.verbose === undefined) return { status: 'ready' }
    return { status: 'ready', checks: { store: 'up', ...(checkRedis && { redis: await checkRedis() }) } }
  })

  // petstore_ready stays current whether or not anything asks /readyz.
  let timer: NodeJS.Timeout | undefined
  app.addHook('onReady', async () => {
    await readiness.check()
    timer = setInterval(() => readiness.check(), READINESS_CHECK_MS).unref()
  })
  app.addHook('onClose', async () => { clearInterval(timer) })
}, {
  name: 'health',
  decorators: { fastify: ['store', 'metrics', 'redisBreaker', 'isDraining'] },
  dependencies: ['method-not-allowed', 'lifecycle'],
  encapsulate: true
})

/**
 * `check`, one call at a time: callers that arrive while it runs share its result, and so do
 * those within `freshMs` after it ended. A flood of /readyz?verbose then costs Redis a few PINGs
 * a second, as a flood of /readyz costs the store a few checks, instead of a PING each.
 */
export function sharedCheck<T> (check: () => Promise<T>, freshMs: number): () => Promise<T> {
  let last: { value: T, at: number } | undefined
  let running: Promise<T> | undefined
  return () => {
    if (last !== undefined && performance.now() - last.at < freshMs) return Promise.resolve(last.value)
    running ??= check()
      .then((value) => { last = { value, at: performance.now() }; return value })
      .finally(() => { running = undefined })
    return running
  }
}

/**
 * Whether the instance is ready, as /readyz replies: not draining, and the store responds (from
 * a check at most READINESS_FRESH_MS old, one at a time, or from a write that failed since).
 * Each change is logged once: a lost store by its cause, failing writes by the store's own
 * line (above), a return by "ready again".
 */
class Readiness {
  readonly #options: HealthOptions
  readonly #log: FastifyBaseLogger
  #problem: Error | undefined
  // What the last change was about; undefined before the first check.
  #state: ReadinessState | undefined
  #checkedAt = -Infinity
  #checking: Promise<void> | undefined
  // Moved on by each write's news: a check begun before it speaks for an older state.
  #generation = 0

  constructor (options: HealthOptions, log: FastifyBaseLogger) {
    this.#options = options
    this.#log = log
  }

  /** Why the instance is not ready; undefined when it is. */
  async problem (): Promise<Error | undefined> {
    if (!this.#options.isDraining() && performance.now() - this.#checkedAt >= READINESS_FRESH_MS) await this.check()
    this.#report()
    return this.#options.isDraining() ? DRAINING : this.#problem
  }

  /** Checks the store now, or joins the check in flight. */
  check (): Promise<void> {
    this.#checking ??= this.#checkStore().finally(() => { this.#checking = undefined })
    return this.#checking
  }

  /** The store's news of its writes: failing makes the instance not ready at once. */
  writesChanged (failure: StorageFailureError | undefined): void {
    // Working again clears only what failing writes caused; anything else waits for a check.
    if (failure === undefined && !(this.#problem instanceof StorageFailureError)) return
    this.#generation++
    this.#checkedAt = performance.now()
    // The store's own line tells this change.
    this.#change(failure, { logged: true })
  }

  async #checkStore (): Promise<void> {
    const generation = this.#generation
    let problem: Error | undefined
    let cause: unknown
    try {
      await this.#options.store.checkReady()
    } catch (error) {
      problem = error instanceof StorageFailureError ? error : new ApiError('unavailable', 'The store is not reachable or not migrated')
      cause = error
    }
    if (generation !== this.#generation) return
    this.#checkedAt = performance.now()
    this.#change(problem, { logged: problem instanceof StorageFailureError, cause })
  }

  #change (problem: Error | undefined, { logged, cause }: { logged: boolean, cause?: unknown }): void {
    const state = stateOf(problem)
    const previous = this.#state
    this.#problem = problem
    this.#state = state
    this.#report()
    if (logged || state === previous) return
    if (state === 'unreachable') this.#log.warn({ err: cause }, 'not ready: store')
    if (state === 'ready' && previous !== undefined) this.#log.info('ready again')
  }

  #report (): void {
    this.#options.ready?.set(this.#options.isDraining() || this.#problem !== undefined ? 0 : 1)
  }
}

const DRAINING = new ApiError('unavailable', 'The server is shutting down.')

type ReadinessState = 'ready' | 'writes failing' | 'unreachable'

function stateOf (problem: Error | undefined): ReadinessState {
  if (problem === undefined) return 'ready'
  return problem instanceof StorageFailureError ? 'writes failing' : 'unreachable'
}
