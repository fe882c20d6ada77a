import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from './errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Begins the drain before close: still serving, readiness false, every reply closes its connection. */
    startDraining(): void
    isDraining(): boolean
  }
}

/**
 * The two phases of a graceful stop. While draining, the load balancer sees /readyz fail and
 * every reply carries Connection: close, so keep-alive connections end after a reply rather
 * than being cut while idle. Once close() has begun, a request that still arrives on an open
 * connection gets 503 with the Error body (Fastify's own return503OnClosing reply has another
 * shape and bypasses the error handler, so it is switched off in app.ts).
 */
export const lifecycle = fp(async function lifecycle (app: FastifyInstance) {
  let draining = false
  let closing = false
  app.decorate('startDraining', () => { draining = true })
  app.decorate('isDraining', () => draining || closing)
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onRequest', (_request, _reply, done) => {
    if (closing) done(new ApiError('unavailable', 'The server is shutting down; retry the request.', { headers: { 'retry-after': '1' } }))
    else done()
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining || closing) reply.header('connection', 'close')
    done(null, payload)
  })
}, {
  name: 'lifecycle',
  // Its 503 while closing then carries the CORS fields too.
  dependencies: ['cors']
})
