import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import packageJson from '../../package.json' with { type: 'json' }
import { routeTemplateOf } from '../http/route-template.ts'
import type { Store } from '../store/types.ts'
import type { AnswerCacheCounters } from '../pets/answer-cache.ts'

type RequestLabel = 'route' | 'method' | 'status'

/** The service's own metrics: one set per app instance, so tests can build many apps side by side. */
export interface Metrics {
  registry: Registry
  requests: Counter<RequestLabel>
  requestDuration: Histogram<RequestLabel>
  petsCreated: Counter
  authFailures: Counter
  rateLimited: Counter
  storeDuration: Histogram<'operation' | 'outcome'>
  /** 1 while /readyz would answer 200, else 0 (src/ops/health.ts keeps it current). */
  ready: Gauge
  /** Always 1; its labels say what runs: version, Node and store. */
  buildInfo: Gauge<'version' | 'node' | 'store'>
  /** The answer cache's lookups, by cache, bound once so that a lookup costs one increment. */
  answerCache: AnswerCacheCounters
}

let processRegistry: Registry | undefined

/**
 * Process metrics (CPU, memory, handles, GC, event-loop lag) describe the process, not an app,
 * and each collection starts timers and observers that never stop: one set per process, merged
 * into every app's exposition.
 */
function processMetrics (): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export function createMetrics (store: Store['kind']): Metrics {
  const own = new Registry()
  const registers = [own]
  const labelNames = ['route', 'method', 'status'] as const
  const metrics = {
    requests: new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status.', labelNames, registers }),
    requestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to sending its answer, by route template, method and status.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers
    }),
    petsCreated: new Counter({ name: 'petstore_pets_created_total', help: 'Pets added through createPet (idempotent replays not counted).', registers }),
    authFailures: new Counter({ name: 'petstore_auth_failures_total', help: 'Requests refused with 401 for a missing or invalid API key.', registers }),
    rateLimited: new Counter({ name: 'petstore_rate_limited_total', help: 'Requests refused with 429 by a rate limit.', registers }),
    storeDuration: new Histogram({
      name: 'petstore_store_query_duration_seconds',
      help: 'Time spent in store calls, by store operation and outcome (ok or error).',
      labelNames: ['operation', 'outcome'],
      buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers
    }),
    ready: new Gauge({ name: 'petstore_ready', help: 'Whether the instance is ready (1) or not (0), as /readyz answers; kept current on a timer.', registers }),
    buildInfo: new Gauge({ name: 'petstore_build_info', help: 'Always 1; the labels name the version, the Node.js version and the store.', labelNames: ['version', 'node', 'store'], registers })
  }
  metrics.buildInfo.labels(packageJson.version, process.version, store).set(1)
  const answerCache = answerCacheCounters(registers)
  // Merged once every metric is in `own`: the merged registry takes the metrics it finds.
  return { registry: Registry.merge([own, processMetrics()]), ...metrics, answerCache }
}

/** The hit and miss counters of each answer cache, their children bound once. */
function answerCacheCounters (registers: Registry[]): Metrics['answerCache'] {
  const labelNames = ['cache'] as const
  const hits = new Counter({ name: 'petstore_answer_cache_hits_total', help: 'Answers sent from the answer cache, by cache (pet or list).', labelNames, registers })
  const misses = new Counter({ name: 'petstore_answer_cache_misses_total', help: 'Answer cache lookups that found nothing and went to the store, by cache (pet or list).', labelNames, registers })
  const bound = (cache: keyof AnswerCacheCounters) => {
    const counters = { hit: hits.labels(cache), miss: misses.labels(cache) }
    // Each series exists from the start: rate() cannot see the first increment of a series
    // that appears with it.
    counters.hit.inc(0)
    counters.miss.inc(0)
    return counters
  }
  return { pet: bound('pet'), list: bound('list') }
}

/**
 * Redis's state as the rate limits see it, in the app's registry only when REDIS_URL is set: a
 * gauge (1 counting in Redis, 0 while the breaker keeps the counters off it) and a count of
 * outages. Returns what to call on each change.
 */
export function redisMetrics ({ registry }: Pick<Metrics, 'registry'>): (state: 'up' | 'down') => void {
  const registers = [registry]
  const up = new Gauge({ name: 'petstore_redis_up', help: '1 while rate limits are counted in Redis; 0 while Redis does not answer and requests pass uncounted.', registers })
  const opened = new Counter({ name: 'petstore_redis_breaker_opened_total', help: 'Times Redis stopped answering and rate limits stopped being counted.', registers })
  up.set(1)
  return (state) => {
    up.set(state === 'up' ? 1 : 0)
    if (state === 'down') opened.inc()
  }
}

/** The counter and histogram children of one (route, method, status). */
interface RequestSeries { count: Counter.Internal, duration: Histogram.Internal<RequestLabel> }

/**
 * The children of each (route, method, status), bound once: an answer finds them by three map
 * lookups and builds no label object (prom-client still checks and joins the bound labels on
 * each observation; it has no cheaper call). A reset of the registry leaves them usable, as
 * they find their series anew on every call.
 */
function requestSeries (metrics: Metrics) {
  // route → method → status → children; nested so that no key is joined per answer.
  const bound = new Map<string, Map<string, Map<number, RequestSeries>>>()
  return (route: string, method: string, status: number): RequestSeries => {
    let byMethod = bound.get(route)
    if (byMethod === undefined) bound.set(route, byMethod = new Map())
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
    let series = byStatus.get(status)
    if (series === undefined) {
      const labels = { route, method, status: String(status) }
      byStatus.set(status, series = { count: metrics.requests.labels(labels), duration: metrics.requestDuration.labels(labels) })
    }
    return series
  }
}

/** Counts every answer by route template (never the raw URL, which would grow without bound). */
export const metricsPlugin = fp(async function metricsPlugin (app: FastifyInstance, { metrics }: { metrics: Metrics }) {
  const seriesOf = requestSeries(metrics)

  app.addHook('onResponse', async (request, reply) => {
    const route = routeTemplateOf(request) ?? 'unmatched'
    const status = reply.statusCode
    const series = seriesOf(route, request.method, status)
    series.count.inc()
    series.duration.observe(reply.elapsedTime / 1000)
    if (status === 401) metrics.authFailures.inc()
    if (status === 429) metrics.rateLimited.inc()
    if (status === 201 && route === '/v1/pets' && request.method === 'POST' && !reply.hasHeader('idempotent-replayed')) {
      metrics.petsCreated.inc()
    }
  })

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}, { name: 'metrics' })
