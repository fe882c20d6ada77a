import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'
import pino from 'pino'
import type { Config } from './config.ts'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A caller's X-Request-Id is kept when it is a sane token, so traces join across services. */
export function requestIdOf (request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
}

export function loggerOptions (config: Pick<Config, 'LOG_LEVEL'>): FastifyServerOptions['logger'] {
  return {
    level: config.LOG_LEVEL,
    // Belt and braces: no code path logs request headers, and if one ever does, they are masked.
    // Fixed paths only: wildcard paths cost a scan of every log line.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' }
  }
}

// A log line is written within this many milliseconds, or as soon as 4 KiB are waiting.
const LOG_FLUSH_MS = 100
const LOG_BATCH_BYTES = 4096

/**
 * Standard output, written in batches: one write per line costs a system call per request,
 * a tenth of what the service spends on a small answer. Lines wait at most LOG_FLUSH_MS, and
 * whatever is waiting is written when the process exits, also on a fatal error; only a
 * SIGKILL can lose the last LOG_FLUSH_MS of lines.
 */
export function batchedStdout (): NodeJS.WritableStream {
  const destination = pino.destination({ dest: 1, sync: true, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS })
  process.once('exit', () => destination.flushSync())
  return destination as unknown as NodeJS.WritableStream
}

/**
 * Fastify gives every request a logger of its own, bound to the request id. Making it costs
 * about as much as a cached answer's own work, and most requests never use it: their one line
 * is written by requestLogging, with the id as a field. So it is made when first used.
 */
export function lazyRequestLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger
}

type LogArgs = Parameters<FastifyBaseLogger['info']>

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #logger: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get #real (): FastifyBaseLogger {
    return (this.#logger ??= this.#parent.child(this.#bindings, this.#options))
  }

  get level (): string { return this.#logger?.level ?? this.#parent.level }
  set level (level: string) { this.#real.level = level }
  fatal (...args: LogArgs) { this.#real.fatal(...args) }
  error (...args: LogArgs) { this.#real.error(...args) }
  warn (...args: LogArgs) { this.#real.warn(...args) }
  info (...args: LogArgs) { this.#real.info(...args) }
  debug (...args: LogArgs) { this.#real.debug(...args) }
  trace (...args: LogArgs) { this.#real.trace(...args) }
  silent (...args: LogArgs) { this.#real.silent(...args) }
  child (bindings: Bindings, options?: ChildLoggerOptions) { return this.#real.child(bindings, options) }
}

/** One line per request: id, method, route template, status, duration, key id. Never the key. */
export function requestLogging (app: FastifyInstance) {
  // Hooks in callback form here and in the other per-request plugins: no promise per hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  // Written by the app's logger with the id as a field: the same line the request's own
  // logger would write, without making that logger.
  const log = app.log
  app.addHook('onResponse', (request, reply, done) => {
    log.info({
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      // The path without its query: a caller that puts a secret in a query string keeps it out of logs.
      path: request.url.split('?', 1)[0],
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      keyId: request.apiKeyId ?? null
    }, 'request')
    done()
  })
}
