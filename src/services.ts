import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import type { Config } from './config.ts'
import { keyCache, type KeyCache } from './auth/key-cache.ts'
import { rateLimits, type AuthLimits } from './auth/rate-limits.ts'
import { redisBreaker, type RedisBreaker } from './auth/redis-breaker.ts'
import { capacityMetrics } from './ops/capacity-metrics.ts'
import { createMetrics, redisMetrics, type Metrics } from './ops/metrics.ts'
import type { Tracing } from './ops/tracing.ts'
import { timedStore } from './store/timed-store.ts'
import type { Store } from './store/types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    /** The store, timed: every call is counted in petstore_store_duration_seconds (and traced when tracing is on). */
    store: Store
    /** The app's metrics, for the hooks that count and the listener Prometheus scrapes (metrics-server.ts). */
    metrics: Metrics
    /** One key cache for the bearer check and the public routes' rate limit. */
    keys: KeyCache
    /** The per-key and failed-auth rate limits. */
    limits: AuthLimits
    /** Milliseconds since the epoch; tests hand in a fixed clock. */
    now: () => number
    /** With REDIS_URL: the circuit breaker in front of the Redis all instances share. */
    redisBreaker: RedisBreaker | undefined
  }
}

export interface ServicesOptions {
  config: Config
  store: Store
  redis?: Redis
  now: () => number
  tracing?: Tracing
}

/**
 * The services every part of the app uses, as decorators of the root instance: a plugin that
 * needs one says so (fastify-plugin's `decorators`), and Fastify refuses to start when it is
 * registered before this one. Closed with the app, the store last.
 */
export const services = fp(async function services (app: FastifyInstance, { config, store, redis, now, tracing }: ServicesOptions) {
  const metrics = createMetrics(store.kind)
  capacityMetrics(metrics.registry, store)
  const timed = timedStore(store, metrics.storeDuration, tracing?.storeSpan(store.kind))
  const breaker = redis && redisBreaker(redis, { openMs: config.REDIS_BREAKER_MS, log: app.log, onChange: redisMetrics(metrics) })
  app.decorate('config', config)
  app.decorate('store', timed)
  app.decorate('metrics', metrics)
  app.decorate('now', now)
  app.decorate('redisBreaker', breaker)
  app.decorate('keys', keyCache(timed, config.KEY_CACHE_TTL_MS))
  app.decorate('limits', rateLimits({
    perKeyPerMinute: config.RATE_LIMIT_PER_MINUTE,
    failedAuthPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE,
    redis: breaker,
    redisKeyPrefix: config.REDIS_KEY_PREFIX
  }))
  // What the bearer check and the rate limits learn of a request, declared here so that every
  // request is made with them (Fastify sets decorated fields in its constructor) and keeps one
  // shape, rather than each hook adding fields to some requests as it runs.
  app.decorateRequest('apiKeyId', undefined)
  app.decorateRequest('keyLineageId', undefined)
  app.decorateRequest('keyScope', undefined)
  app.decorateRequest('keyCountDeferred', undefined)
  app.addHook('onClose', async () => {
    await timed.close()
    breaker?.stop()
    redis?.disconnect()
  })
}, { name: 'services' })
