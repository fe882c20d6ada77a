import pino from 'pino'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from './config.ts'
import { BODY_LIMIT_BYTES } from './contract/schemas.ts'
import { connectionOptions, limitConnections } from './http/client-connections.ts'
import { clientErrorHandler, frameworkErrors, refuseConnect } from './http/client-errors.ts'
import { cors } from './http/cors.ts'
import { errorReplies } from './http/errors.ts'
import { jsonBodies } from './http/json-body.ts'
import { lifecycle } from './http/lifecycle.ts'
import { lingeringClose } from './http/lingering-close.ts'
import { loadShedding } from './http/load-shedding.ts'
import { keysRedacted, lazyRequestLogger, loggerOptions, requestIdOf, requestLogging, type LogDestination } from './http/logging.ts'
import { methodNotAllowed } from './http/method-not-allowed.ts'
import { securityHeaders } from './http/security-headers.ts'
import { sharedSerializers } from './http/serializers.ts'
import { namedSchemas, validatorFactory } from './http/validation.ts'
import { healthRoutes } from './ops/health.ts'
import { httpMetrics } from './ops/metrics.ts'
import type { Tracing } from './ops/tracing.ts'
import { replyCache } from './pets/reply-cache.ts'
import { keyedRoutes } from './scopes/keyed-routes.ts'
import { publicRoutes } from './scopes/public-routes.ts'
import { services } from './services.ts'
import type { Store } from './store/types.ts'

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

export async function buildApp ({ config, store, redis, now = Date.now, logStream, describeRoutes = false, tracing }: AppDeps): Promise<FastifyInstance> {
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
  // Each plugin names the plugins and decorators it needs before it (fastify-plugin's
  // `dependencies` and `decorators`), and Fastify refuses to start when one is missing or comes
  // later (test/app.test.ts). Two orders cannot be named, as those plugins are optional: tracing
  // goes before every plugin that hooks requests but the connection limits, so that its request
  // span covers their hooks, and describeRoutes goes before the routes it records.
  await app.register(services, { config, store, redis, now, tracing })
  await app.register(limitConnections)
  await app.register(refuseConnect)
  if (tracing) await app.register(tracing.plugin)
  await app.register(namedSchemas)
  await app.register(errorReplies)
  await app.register(jsonBodies)
  await app.register(lingeringClose)
  await app.register(requestLogging, { destination: logDestination, traceFields: tracing?.logFields })
  await app.register(methodNotAllowed)
  await app.register(httpMetrics)
  await app.register(cors)
  await app.register(lifecycle)
  await app.register(securityHeaders)
  await app.register(loadShedding)
  await app.register(replyCache)
  if (describeRoutes) await app.register((await import('./ops/openapi-generator.ts')).describeRoutes)
  // The probes: never counted against a rate limit.
  await app.register(healthRoutes)
  await app.register(publicRoutes)
  await app.register(keyedRoutes, { prefix: '/v1' })
  return app
}
