import pino from 'pino'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Redis } from 'ioredis'
import { clientErrorHandler, frameworkErrors, refuseConnect } from './http/client-errors.ts'
import type { Config } from './config.ts'
import { connectionOptions, limitConnections } from './http/client-connections.ts'
import { errorHandler, notFoundBeforeBody, notFoundHandler } from './http/errors.ts'
import { assertUtf8, parseJsonBytes } from './http/json-body.ts'
import { keysRedacted, lazyRequestLogger, loggerOptions, requestIdOf, requestLogging, type LogDestination } from './http/logging.ts'
import { admitKey, bearerAuth } from './auth/bearer.ts'
import { keyCache } from './auth/key-cache.ts'
import { publicRoutesLimit } from './auth/public-routes.ts'
import { cors } from './http/cors.ts'
import { docsRoutes } from './ops/docs.ts'
import { lifecycle } from './http/lifecycle.ts'
import { lingeringClose } from './http/lingering-close.ts'
import { capacityMetrics } from './ops/capacity-metrics.ts'
import { createMetrics, metricsPlugin, redisMetrics } from './ops/metrics.ts'
import { timedStore } from './store/timed-store.ts'
import type { Tracing } from './ops/tracing.ts'
import { openapiRoute } from './ops/openapi.ts'
import { rateLimits } from './auth/rate-limits.ts'
import { redisBreaker } from './auth/redis-breaker.ts'
import { securityHeaders } from './http/security-headers.ts'
import { healthRoutes } from './ops/health.ts'
import { methodNotAllowed } from './http/method-not-allowed.ts'
import { loadShedding } from './http/load-shedding.ts'
import { replyCache } from './pets/reply-cache.ts'
import { petRoutes } from './pets/routes.ts'
import { keepRouteTemplates } from './http/route-template.ts'
import { BODY_LIMIT_BYTES, sharedSchemas } from './contract/schemas.ts'
import { sharedSerializers } from './http/serializers.ts'
import type { Store } from './store/types.ts'
import { validatorFactory } from './http/validation.ts'

/** What an app needs from outside: tests hand in a temporary store, a literal config and a fixed clock. */
export interface AppDeps {
  config: Config
  store: Store
  /** The Redis all instances share (REDIS_URL): rate-limit counters live there, behind a circuit breaker. */
  redis?: Redis
  /** Milliseconds since the epoch; injectable so tests can stand after getPet's sunset. */
  now?: () => number
  /** Where log lines go; tests capture them. Defaults to stdout. */
  logStream?: LogDestination
  /**
   * Records the routes so that `app.swagger()` gives the OpenAPI document they describe:
   * `npm run openapi` and its test. The service itself serves the committed document.
   */
  describeRoutes?: boolean
  /** OpenTelemetry, when OTEL_* turns it on (src/server.ts); without it nothing is traced. */
  tracing?: Tracing
}

const HOP_COUNT = /^\d+$/

/**
 * TRUST_PROXY: how many proxies are in front, or their comma-separated addresses/CIDRs. The
 * client address is then the right-most X-Forwarded-For entry that no trusted proxy wrote.
 * `true` is refused by loadConfig: it takes the left-most entry, which the client writes.
 */
export function trustProxyOf (setting: string | undefined): FastifyServerOptions['trustProxy'] {
  if (setting === undefined) return false
  if (!HOP_COUNT.test(setting)) return setting
  // Fastify takes a bare number as trusting no one; as a function, hop 0 is the TCP peer.
  const hops = Number(setting)
  return (_address: string, hop: number) => hop < hops
}

export async function buildApp ({ config, store: givenStore, redis, now = Date.now, logStream, describeRoutes = false, tracing }: AppDeps): Promise<FastifyInstance> {
  const metrics = createMetrics(givenStore.kind)
  capacityMetrics(metrics.registry, givenStore)
  const store = timedStore(givenStore, metrics.storeDuration, tracing?.storeSpan(givenStore.kind))
  // pino and the request lines (requestLogging) write to one destination, in order.
  const logDestination = logStream ?? pino.destination({ dest: 1, sync: true })
  const app = Fastify({
    logger: { ...loggerOptions(config), stream: keysRedacted(logDestination) },
    genReqId: requestIdOf,
    childLoggerFactory: lazyRequestLogger,
    // One line per request, written by requestLogging, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Replaced by http/lifecycle.ts, whose 503 carries the Error body.
    return503OnClosing: false,
    ...connectionOptions(config),
    trustProxy: trustProxyOf(config.TRUST_PROXY),
    clientErrorHandler,
    frameworkErrors,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers, buildValidator: validatorFactory() } }
  })
  limitConnections(app, config, metrics.connections)
  refuseConnect(app)
  // The plugins below name those they need before them (fastify-plugin's `dependencies`), and
  // Fastify refuses to start when one is missing or comes later. Three orders cannot be declared
  // that way: tracing (OpenTelemetry's plugin, and optional) goes first, so that its request span
  // covers every hook; describeRoutes (optional) goes before the routes it records; and every
  // plugin that hooks all requests goes before the first scope, which copies the hooks it finds.
  if (tracing) await app.register(tracing.plugin)

  for (const schema of sharedSchemas) app.addSchema(schema)
  app.setErrorHandler(errorHandler)
  app.removeAllContentTypeParsers()
  // Synchronous: what it throws (415, 400) Fastify hands to the error handler.
  app.addContentTypeParser<Buffer>('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    assertUtf8(request.headers['content-type'])
    done(null, parseJsonBytes(body))
  })
  keepRouteTemplates(app)
  lingeringClose(app)
  requestLogging(app, logDestination, tracing?.logFields)
  await app.register(methodNotAllowed)
  await app.register(metricsPlugin, { metrics })
  await app.register(cors)
  await app.register(lifecycle)
  await app.register(securityHeaders)
  await app.register(loadShedding, { maxEventLoopDelayMs: config.MAX_EVENT_LOOP_DELAY_MS, now })
  await app.register(replyCache, {
    store,
    limits: { entries: config.REPLY_CACHE_ENTRIES, maxBytes: config.REPLY_CACHE_MAX_BYTES },
    counters: metrics.replyCache
  })
  const breaker = redis && redisBreaker(redis, { openMs: config.REDIS_BREAKER_MS, log: app.log, onChange: redisMetrics(metrics) })
  const limits = rateLimits({
    perKeyPerMinute: config.RATE_LIMIT_PER_MINUTE,
    failedAuthPerMinute: config.FAILED_AUTH_LIMIT_PER_MINUTE,
    redis: breaker,
    redisKeyPrefix: config.REDIS_KEY_PREFIX
  })

  // One key cache for the bearer check and the public routes' rate limit.
  const keys = keyCache(store, config.KEY_CACHE_TTL_MS)

  if (describeRoutes) await app.register((await import('./ops/openapi-generator.ts')).describeRoutes)
  // The probes: never counted against a rate limit.
  await app.register(healthRoutes, { store, checkRedis: breaker?.check, isDraining: () => app.isDraining(), ready: metrics.ready })
  // The public routes: no key needed, every request counted, unknown paths included.
  await app.register(async (open) => {
    open.addHook('onRequest', publicRoutesLimit(keys, now, limits))
    open.addHook('onRequest', admitKey(limits))
    // Unknown paths belong to this scope, so its hooks count them; notFoundBeforeBody replies to
    // them before the handler would, and before any body is read.
    open.addHook('onRequest', notFoundBeforeBody)
    open.setNotFoundHandler(notFoundHandler)
    await open.register(docsRoutes)
    await open.register(openapiRoute, { prefix: '/v1', publicUrl: config.PUBLIC_URL, stagingUrl: config.STAGING_URL })
  })
  // The pet operations: a usable key or 401.
  await app.register(async (guarded) => {
    guarded.addHook('onRequest', bearerAuth(keys, store, now, limits))
    guarded.addHook('onRequest', admitKey(limits))
    await guarded.register(petRoutes, {
      store,
      now,
      idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS,
      publicUrl: config.PUBLIC_URL,
      deprecatedAt: new Date(config.DEPRECATION_DATE),
      sunsetAt: new Date(config.SUNSET_DATE),
      petsCreated: metrics.petsCreated
    })
  }, { prefix: '/v1' })

  app.addHook('onClose', async () => {
    await store.close()
    breaker?.stop()
    redis?.disconnect()
  })
  return app
}
