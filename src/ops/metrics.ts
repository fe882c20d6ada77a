import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import packageJson from '../../package.json' with { type: 'json' }
import type { Store } from '../store/types.ts'
import type { LookupCounters, ReplyCacheCounters } from '../pets/reply-cache.ts'
import type { ConnectionCounters } from '../http/client-connections.ts'
import { RequestMetrics, StoreDurations } from './series-metrics.ts'

/** The service's own metrics: one set per app instance, so tests can build many apps side by side. */
export interface Metrics {
  registry: Registry
  /** http_requests_total and http_request_duration_seconds, by route template, method and status. */
  http: RequestMetrics
  /** Counted by createPet, where pets are created. */
  petsCreated: Counter
  authFailures: Counter
  rateLimited: Counter
  /** petstore_store_query_duration_seconds, by operation and outcome. */
  storeDuration: StoreDurations
  /** 1 while /readyz would reply 200, else 0 (src/ops/health.ts keeps it current). */
  ready: Gauge
  /** Always 1; its labels say what runs: version, Node and store. */
  buildInfo: Gauge<'version' | 'node' | 'store'>
  /** The reply cache's lookups, by cache: a lookup adds one to a plain number. */
  replyCache: ReplyCacheCounters
  /** What the process did when all MAX_CONNECTIONS slots were held (http/client-connections.ts). */
  connections: ConnectionCounters
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
  const http = new RequestMetrics(
    { name: 'http_requests_total', help: 'HTTP requests replied to, by route template, method and status.' },
    { name: 'http_request_duration_seconds', help: 'Time from receiving a request to sending its reply, by route template, method and status.' },
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
  )
  const storeDuration = new StoreDurations(
    { name: 'petstore_store_query_duration_seconds', help: 'Time spent in store calls, by store operation and outcome (ok or error).' },
    [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]
  )
  // In the exposition's order, which alerts and dashboards do not depend on but readers do.
  own.registerMetric(http.counter)
  own.registerMetric(http.histogram)
  const petsCreated = new Counter({ name: 'petstore_pets_created_total', help: 'Pets added through createPet (idempotent replays not counted).', registers })
  const authFailures = new Counter({ name: 'petstore_auth_failures_total', help: 'Requests refused with 401 for a missing or invalid API key.', registers })
  const rateLimited = new Counter({ name: 'petstore_rate_limited_total', help: 'Requests refused with 429 by a rate limit.', registers })
  const connections = {
    reclaimed: new Counter({ name: 'petstore_connections_reclaimed_total', help: 'Connections closed to make room for a new one while MAX_CONNECTIONS were open, by the state they were in (silent, receiving, idle).', labelNames: ['state'], registers }),
    refused: new Counter({ name: 'petstore_connections_refused_total', help: 'Connections whose request was answered 503 because MAX_CONNECTIONS were open and each was busy.', registers })
  }
  own.registerMetric(storeDuration.histogram)
  const metrics = {
    connections,
    petsCreated,
    authFailures,
    rateLimited,
    ready: new Gauge({ name: 'petstore_ready', help: 'Whether the instance is ready (1) or not (0), as /readyz replies; kept current on a timer.', registers }),
    buildInfo: new Gauge({ name: 'petstore_build_info', help: 'Always 1; the labels name the version, the Node.js version and the store.', labelNames: ['version', 'node', 'store'], registers })
  }
  metrics.buildInfo.labels(packageJson.version, process.version, store).set(1)
  const replyCache = replyCacheCounters(own)
  // Merged once every metric is in `own`: the merged registry takes the metrics it finds.
  return { registry: Registry.merge([own, processMetrics()]), http, storeDuration, ...metrics, replyCache }
}

/**
 * The hit and miss counters of each reply cache. A lookup adds one to a plain number;
 * prom-client's Counter takes the sums when /metrics is read (its collect callback), so a lookup
 * does not pay for prom-client's label check and hash (see series-metrics.ts).
 */
function replyCacheCounters (registry: Registry): Metrics['replyCache'] {
  const counts: Record<keyof ReplyCacheCounters, { hit: number, miss: number }> = { pet: { hit: 0, miss: 0 }, list: { hit: 0, miss: 0 } }
  const caches = Object.keys(counts) as Array<keyof ReplyCacheCounters>
  const labelNames = ['cache'] as const
  const takeCounts = (outcome: 'hit' | 'miss') => function (this: Counter<'cache'>) {
    // Every series exists from the start (an increment of 0): rate() cannot see the first
    // increment of a series that appears with it.
    for (const cache of caches) {
      this.inc({ cache }, counts[cache][outcome])
      counts[cache][outcome] = 0
    }
  }
  const hits = { name: 'petstore_reply_cache_hits_total', help: 'Replies sent from the reply cache, by cache (pet or list).' }
  const misses = { name: 'petstore_reply_cache_misses_total', help: 'Reply cache lookups that found nothing and went to the store, by cache (pet or list).' }
  for (const [text, outcome] of [[hits, 'hit'], [misses, 'miss']] as const) {
    registry.registerMetric(new Counter({ ...text, labelNames, registers: [], collect: takeCounts(outcome) }))
  }
  const lookups = (cache: keyof ReplyCacheCounters): LookupCounters => ({
    hit: { inc: () => { counts[cache].hit++ } },
    miss: { inc: () => { counts[cache].miss++ } }
  })
  return { pet: lookups('pet'), list: lookups('list') }
}

/**
 * Redis's state as the rate limits see it, in the app's registry only when REDIS_URL is set: a
 * gauge (1 counting in Redis, 0 while the breaker keeps the counters off it) and a count of
 * outages. Returns what to call on each change.
 */
export function redisMetrics ({ registry }: Pick<Metrics, 'registry'>): (state: 'up' | 'down') => void {
  const registers = [registry]
  const up = new Gauge({ name: 'petstore_redis_up', help: '1 while rate limits are counted in Redis; 0 while Redis does not reply and requests pass uncounted.', registers })
  const opened = new Counter({ name: 'petstore_redis_breaker_opened_total', help: 'Times Redis stopped replying and rate limits stopped being counted.', registers })
  up.set(1)
  return (state) => {
    up.set(state === 'up' ? 1 : 0)
    if (state === 'down') opened.inc()
  }
}

/**
 * The methods counted by their own name. Node's parser accepts some thirty more (PROPFIND,
 * PURGE…), each a 405 or 404 the client chose: one label value for all of them keeps the
 * series a client can make bounded.
 */
const COUNTED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])

/** Counts every reply by route template (never the raw URL, which would grow without bound). */
export const httpMetrics = fp(async function httpMetrics (app: FastifyInstance) {
  const { metrics } = app
  // Callback form, as the other hooks every reply runs (http/logging.ts): no promise per reply.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const status = reply.statusCode
    const method = COUNTED_METHODS.has(request.method) ? request.method : 'other'
    metrics.http.record(route, method, status, reply.elapsedTime / 1000)
    if (status === 401) metrics.authFailures.inc()
    if (status === 429) metrics.rateLimited.inc()
    done()
  })
}, { name: 'http-metrics', decorators: { fastify: ['metrics'] } })
