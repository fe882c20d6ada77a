import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
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

/** One line per request: id, method, route template, status, duration, key id. Never the key. */
export function requestLogging (app: FastifyInstance) {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({
      method: request.method,
      route: request.routeOptions.url ?? null,
      // The path without its query: a caller that puts a secret in a query string keeps it out of logs.
      path: request.url.split('?', 1)[0],
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      keyId: request.apiKeyId ?? null
    }, 'request')
  })
}
