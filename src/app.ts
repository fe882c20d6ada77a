import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from './config.ts'
import { errorHandler, notFoundHandler } from './errors.ts'
import { assertUtf8, parseJsonBody } from './json-body.ts'
import { loggerOptions, requestIdOf, requestLogging } from './logging.ts'
import { bearerAuth } from './plugins/auth.ts'
import { docsRoutes } from './plugins/docs.ts'
import { createMetrics, instrumentStore, metricsPlugin } from './plugins/metrics.ts'
import { openapi, openapiRoute } from './plugins/openapi.ts'
import { healthRoutes } from './routes/health.ts'
import { allowOnly } from './routes/method-not-allowed.ts'
import { petRoutes } from './routes/pets.ts'
import { sharedSchemas } from './schemas.ts'
import type { Store } from './store/types.ts'
import { createValidatorCompiler } from './validation.ts'

export const BODY_LIMIT_BYTES = 16 * 1024

/** What an app needs from outside: tests hand in a temporary store, a literal config and a fixed clock. */
export interface AppDeps {
  config: Config
  store: Store
  /** The Redis all instances share (REDIS_URL), for state they must agree on; checked by /readyz. */
  redis?: Redis
  /** Milliseconds since the epoch; injectable so tests can stand after getPet's sunset. */
  now?: () => number
  /** Where log lines go; tests capture them. Defaults to stdout. */
  logStream?: NodeJS.WritableStream
}

export async function buildApp ({ config, store: givenStore, redis, now = Date.now, logStream }: AppDeps): Promise<FastifyInstance> {
  const metrics = createMetrics()
  const store = instrumentStore(givenStore, metrics.storeDuration)
  const logger = loggerOptions(config)
  const app = Fastify({
    logger: logStream && typeof logger === 'object' ? { ...logger, stream: logStream } : logger,
    genReqId: requestIdOf,
    // One line per request, written by requestLogging, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true
  })

  app.setValidatorCompiler(createValidatorCompiler())
  for (const schema of sharedSchemas) app.addSchema(schema)
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      assertUtf8(request.headers['content-type'])
      done(null, parseJsonBody(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
  requestLogging(app)
  await app.register(metricsPlugin, { metrics })

  await app.register(openapi, { publicUrl: config.PUBLIC_URL })
  await app.register(healthRoutes, { store, redis })
  await app.register(docsRoutes)
  await app.register(async (v1) => {
    await v1.register(openapiRoute)
    // Encapsulated: the bearer check covers the pet operations only.
    await v1.register(async (guarded) => {
      guarded.addHook('onRequest', bearerAuth(store, now, config.KEY_CACHE_TTL_MS))
      await guarded.register(petRoutes, {
        store,
        now,
        publicUrl: config.PUBLIC_URL,
        deprecatedAt: new Date(config.DEPRECATION_DATE),
        sunsetAt: new Date(config.SUNSET_DATE),
        cacheEntries: config.ANSWER_CACHE_ENTRIES
      })
      // Inside the guarded scope: a wrong method on a pet path is still answered 401 first.
      allowOnly(guarded, '/pets', ['GET', 'HEAD', 'POST'])
      allowOnly(guarded, '/pets/:petId', ['GET', 'HEAD'])
    })
  }, { prefix: '/v1' })

  allowOnly(app, '/v1/openapi.json', ['GET', 'HEAD'])
  for (const url of ['/healthz', '/readyz', '/metrics', '/docs', '/docs/']) allowOnly(app, url, ['GET', 'HEAD'])

  app.addHook('onClose', async () => {
    await store.close()
    redis?.disconnect()
  })
  return app
}
