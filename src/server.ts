import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import { ensureFirstKey, firstKeyFile, firstKeyNotice } from './auth/first-key.ts'
import { loadConfig, renamedSettings, type Config } from './config.ts'
import { batchedStdout } from './http/logging.ts'
import { connectRedis } from './auth/redis.ts'
import { metricsServer } from './ops/metrics-server.ts'
import { openStore, poolOptions } from './store/index.ts'

/** Serves until SIGTERM or SIGINT, then drains and exits 0. Used by `npm start` and `petstore serve`. */
export async function serve (env: Record<string, string | undefined>): Promise<FastifyInstance> {
  const config: Config = loadConfig(env)
  // Before the store opens: the PostgreSQL instrumentation patches the driver as it is loaded.
  const tracing = tracingWanted(env) ? (await import('./ops/tracing.ts')).startTracing(env) : undefined
  const store = await openStore(config.DATABASE_URL, poolOptions(config))
  const migrations = await store.migrate()
  const redis = config.REDIS_URL === undefined ? undefined : await connectRedis(config.REDIS_URL, config.REDIS_TIMEOUT_MS)
  const firstKey = firstKeyNotice(await ensureFirstKey(store, firstKeyFile(config)))
  // Where the key is, or how to make one, for whoever watches the terminal; never the key.
  if (firstKey) process.stderr.write(`${firstKey.message}\n`)
  const logStream = batchedStdout()
  const app = await buildApp({ config, store, redis, logStream, tracing })
  if (tracing) app.addHook('onClose', () => tracing.shutdown())
  // Which release last changed the schema, for a rollback (docs/operations/backups.md).
  if (migrations.length > 0) app.log.info({ migrations }, 'migrations applied')
  if (firstKey) app.log[firstKey.level](firstKey.fields, firstKey.message)
  for (const { old, current, message } of renamedSettings(env)) app.log.warn({ setting: old, renamedTo: current }, message)
  const metrics = metricsServer(app.metrics.registry)
  app.addHook('onClose', () => metrics.close())
  // Both ports are bound before either is announced (the metrics listener logs nothing itself):
  // a port in use stops start-up with the fatal line last, after the lines logged so far.
  let metricsAddress: string
  try {
    metricsAddress = await listen(metrics, 'METRICS_PORT', config.METRICS_PORT, config.METRICS_HOST)
    await listen(app, 'PORT', config.PORT, config.HOST)
  } catch (error) {
    logStream.flushSync()
    throw error
  }
  app.log.info(`metrics listening at ${metricsAddress}`)
  closeOnSignals(app, config)
  return app
}

/** Binds one listener; a port already taken is named by its setting, with how to change it. */
async function listen (server: FastifyInstance, setting: 'PORT' | 'METRICS_PORT', port: number, host: string): Promise<string> {
  try {
    return await server.listen({ port, host })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
    throw new Error(`${setting} ${port} is in use on ${host}: set ${setting} to a free port, 0 picks one`)
  }
}

/**
 * Tracing is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_SDK_DISABLED is not true. Off, the OpenTelemetry
 * SDK is never loaded and nothing is added to the request path.
 */
export function tracingWanted (env: Record<string, string | undefined>): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true'
}

/**
 * A signal that follows the first within this window is the same stop, not a second one.
 * SIGTERM to `npm start`'s process group (`kill -- -PGID`, systemd's KillMode=control-group)
 * reaches the server directly and again through npm, which passes it on a few milliseconds
 * later; a person pressing Ctrl-C a second time comes well after.
 */
export const REPEAT_SIGNAL_WINDOW_MS = 1000

// close-with-grace takes these signals unless told to skip them. It exits 1 at any signal that
// follows the first, which would cut the drain at npm's repeat (above): SIGTERM and SIGINT are
// taken by closeOnSignals instead, and the others keep Node's default.
const SIGNALS: closeWithGrace.Signals[] = ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGSEGV', 'SIGUSR2', 'SIGTERM']

/**
 * A graceful stop in two phases. Drain: keep serving for SHUTDOWN_DRAIN_MS with readiness
 * false, so the load balancer moves traffic away, while every reply says Connection: close,
 * so clients leave their keep-alive connections after a reply instead of having them cut
 * while idle (which is what close() does to idle connections, and what clients see as resets).
 * Then close: stop accepting, finish what is in flight, exit 0. A second signal, later than
 * REPEAT_SIGNAL_WINDOW_MS after the first, ends the drain early. close-with-grace bounds the
 * whole stop by SHUTDOWN_TIMEOUT_MS (exit 1), and closes without a drain on an uncaught
 * error or unhandled rejection (exit 1).
 */
function closeOnSignals (app: FastifyInstance, config: Pick<Config, 'SHUTDOWN_TIMEOUT_MS' | 'SHUTDOWN_DRAIN_MS'>) {
  let endDrain: (() => void) | undefined
  let stoppingSince: number | undefined
  const closer = closeWithGrace({
    delay: config.SHUTDOWN_TIMEOUT_MS,
    logger: false,
    skip: SIGNALS,
    onTimeout: (timeoutMs) => app.log.error({ timeoutMs }, 'requests still running after the shutdown timeout; exiting'),
    onSecondError: (error) => app.log.fatal({ err: error }, 'another uncaught error while closing; exiting')
  }, async ({ err, manual }) => {
    if (err) app.log.fatal({ err }, 'uncaught error: closing without a drain')
    // Called by stop() below; not on an uncaught error, nor on beforeExit.
    if (manual) await new Promise<void>((resolve) => { endDrain = resolve; setTimeout(resolve, config.SHUTDOWN_DRAIN_MS) })
    app.log.info('closing: no new connections, finishing requests in flight')
    await app.close().catch((error: unknown) => {
      app.log.error({ err: error }, 'close failed')
      throw error
    })
  })
  const stop = (signal: string) => {
    if (stoppingSince === undefined) {
      stoppingSince = performance.now()
      app.startDraining()
      app.log.info({ signal, drainMs: config.SHUTDOWN_DRAIN_MS }, 'draining: not ready, still serving, closing connections after each reply')
      closer.close()
    } else if (performance.now() - stoppingSince < REPEAT_SIGNAL_WINDOW_MS) {
      app.log.info({ signal, windowMs: REPEAT_SIGNAL_WINDOW_MS }, 'signal repeated within the window: the same stop, the drain goes on')
    } else {
      endDrain?.()
    }
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

export function startFailure (error: unknown): never {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`petstore: cannot start: ${message.split('\n')[0]}\n`)
  process.exit(1)
}

if (import.meta.main) {
  await serve(process.env).catch(startFailure)
}
