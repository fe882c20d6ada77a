import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Registry } from 'prom-client'
import { routeTemplateOf } from '../http/route-template.ts'
import type { Store } from '../store/types.ts'
import { RequestMetrics, StoreDurations } from './series-metrics.ts'

/** The service's own metrics: one set per app instance, so tests can build many apps side by side. */
export interface Metrics {
  registry: Registry
  /** http_requests_total and http_request_duration_seconds. */
  http: RequestMetrics
  petsCreated: Counter
  authFailures: Counter
  rateLimited: Counter
  /** petstore_store_query_duration_seconds. */
  storeDuration: StoreDurations
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

export function createMetrics (): Metrics {
  const own = new Registry()
  const registers = [own]
  const http = new RequestMetrics(
    { name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status.' },
    { name: 'http_request_duration_seconds', help: 'Time from receiving a request to sending its answer, by route template, method and status.' },
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
  )
  own.registerMetric(http.counter)
  own.registerMetric(http.histogram)
  // Every authenticated request makes a store call (the key cache's version check).
  const storeDuration = new StoreDurations(
    { name: 'petstore_store_query_duration_seconds', help: 'Time spent in store calls, by store operation and outcome (ok or error).' },
    [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]
  )
  const metrics: Metrics = {
    registry: own,
    http,
    petsCreated: new Counter({ name: 'petstore_pets_created_total', help: 'Pets added through createPet (idempotent replays not counted).', registers }),
    authFailures: new Counter({ name: 'petstore_auth_failures_total', help: 'Requests refused with 401 for a missing or invalid API key.', registers }),
    rateLimited: new Counter({ name: 'petstore_rate_limited_total', help: 'Requests refused with 429 by a rate limit.', registers }),
    storeDuration
  }
  own.registerMetric(storeDuration.histogram)
  metrics.registry = Registry.merge([own, processMetrics()])
  return metrics
}

/** The same store, with every call timed into the store duration histogram. */
export function instrumentStore (store: Store, duration: Metrics['storeDuration']): Store {
  // Made once per method: the proxy is asked for a method on every store call.
  const wrapped = new Map<string | symbol, unknown>()
  return new Proxy(store, {
    get (target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') return value
      let method = wrapped.get(property)
      if (method === undefined) {
        // Called on the target itself: adapters keep their connections in private fields.
        method = property === 'close' || typeof property !== 'string'
          ? value.bind(target)
          : timed(target, value as (...a: unknown[]) => unknown, property, duration)
        wrapped.set(property, method)
      }
      return method
    }
  })
}

function timed (target: Store, method: (...a: unknown[]) => unknown, operation: string, durations: StoreDurations) {
  const seconds = (started: number) => (performance.now() - started) / 1000
  return (...args: unknown[]) => {
    const started = performance.now()
    let result: unknown
    try {
      result = method.apply(target, args)
    } catch (error) {
      durations.record(operation, 'error', seconds(started))
      throw error
    }
    if (!(result instanceof Promise)) {
      durations.record(operation, 'ok', seconds(started))
      return result
    }
    return result.then(
      (resolved) => { durations.record(operation, 'ok', seconds(started)); return resolved },
      (error: unknown) => { durations.record(operation, 'error', seconds(started)); throw error }
    )
  }
}

/** Counts every answer by route template (never the raw URL, which would grow without bound). */
export const metricsPlugin = fp(async function metricsPlugin (app: FastifyInstance, { metrics }: { metrics: Metrics }) {
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeTemplateOf(request) ?? 'unmatched'
    const status = reply.statusCode
    metrics.http.record(route, request.method, status, reply.elapsedTime / 1000)
    if (status === 401) metrics.authFailures.inc()
    if (status === 429) metrics.rateLimited.inc()
    if (status === 201 && route === '/v1/pets' && request.method === 'POST' && !reply.hasHeader('idempotent-replayed')) {
      metrics.petsCreated.inc()
    }
    done()
  })

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}, { name: 'metrics' })
