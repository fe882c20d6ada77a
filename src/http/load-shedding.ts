import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from './errors.ts'

// Two samples of the load-shedding monitor (one a second).
const STARTUP_GRACE_MS = 2000

/**
 * 503 `unavailable` with Retry-After while the event loop lags longer than
 * MAX_EVENT_LOOP_DELAY_MS (0 switches shedding off), rather than slowing every request down.
 * After the CORS plugin, so that a page can read the 503 too.
 */
export const loadShedding = fp(async function loadShedding (app: FastifyInstance) {
  const { now, config: { MAX_EVENT_LOOP_DELAY_MS: maxEventLoopDelayMs } } = app
  // The first samples of the event loop hold start-up work (compiling schemas), not load.
  let shedFrom = Infinity
  app.addHook('onReady', async () => { shedFrom = now() + STARTUP_GRACE_MS })
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    pressureHandler: async (request) => {
      // Liveness stays available under load: restarting a busy instance only makes things worse.
      if (request.routeOptions.url === '/healthz' || now() < shedFrom) return
      throw new ApiError('unavailable', 'The server is overloaded; retry after the time in Retry-After.', { headers: { 'retry-after': '5' } })
    }
  })
}, { name: 'load-shedding', decorators: { fastify: ['config', 'now'] }, dependencies: ['cors'] })
