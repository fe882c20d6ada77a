import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import { ensureFirstKey } from './bootstrap.ts'
import { loadConfig, type Config } from './config.ts'
import { connectRedis } from './redis.ts'
import { openStore, poolOptions } from './store/index.ts'

/** Serves until SIGTERM or SIGINT, then drains and exits 0. Used by `npm start` and `petstore serve`. */
export async function serve (env: Record<string, string | undefined>): Promise<FastifyInstance> {
  const config: Config = loadConfig(env)
  const store = await openStore(config.DATABASE_URL, poolOptions(config))
  await store.migrate()
  const redis = config.REDIS_URL === undefined ? undefined : await connectRedis(config.REDIS_URL, config.REDIS_TIMEOUT_MS)
  const firstKey = await ensureFirstKey(store)
  if (firstKey) {
    // Shown once, on stderr and outside the JSON log, so log pipelines never hold a key;
    // shown at once, so that a start-up failing later cannot lose the only key.
    process.stderr.write(`\nFirst API key (shown once, keep it): ${firstKey}\n` +
      'Make more with: npm run --silent petstore -- keys create --name NAME\n\n')
  }
  const app = await buildApp({ config, store, redis })
  if (firstKey) app.log.info({ prefix: firstKey.slice(0, 12) }, 'created the first API key; it was printed once on stderr')
  await app.listen({ port: config.PORT, host: config.HOST })
  closeOnSignals(app, config.SHUTDOWN_TIMEOUT_MS)
  return app
}

function closeOnSignals (app: FastifyInstance, timeoutMs: number) {
  let closing = false
  const close = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'closing: no new connections, finishing requests in flight')
    const timer = setTimeout(() => {
      app.log.error({ timeoutMs }, 'requests still running after the shutdown timeout; exiting')
      process.exit(1)
    }, timeoutMs)
    timer.unref()
    app.close().then(() => process.exit(0), (error: unknown) => {
      app.log.error({ err: error }, 'close failed')
      process.exit(1)
    })
  }
  process.on('SIGTERM', () => close('SIGTERM'))
  process.on('SIGINT', () => close('SIGINT'))
}

export function startFailure (error: unknown): never {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`petstore: cannot start: ${message.split('\n')[0]}\n`)
  process.exit(1)
}

if (import.meta.main) {
  await serve(process.env).catch(startFailure)
}
