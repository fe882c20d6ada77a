import type { FastifyInstance } from 'fastify'
import { metricsServer } from '../../src/ops/metrics-server.ts'

const listeners = new WeakMap<FastifyInstance, FastifyInstance>()

/**
 * The metrics listener src/server.ts serves for an app (METRICS_PORT), built once per app;
 * the API's own port does not serve /metrics.
 */
export function metricsListenerOf (app: FastifyInstance): FastifyInstance {
  let listener = listeners.get(app)
  if (listener === undefined) listeners.set(app, listener = metricsServer(app.metrics.registry))
  return listener
}

/** The exposition a scrape of the app's metrics listener reads. */
export async function scrape (app: FastifyInstance): Promise<string> {
  // As src/server.ts starts the listener: once the app is ready (its first readiness check made).
  await app.ready()
  const res = await metricsListenerOf(app).inject({ url: '/metrics' })
  if (res.statusCode !== 200) throw new Error(`GET /metrics got ${res.statusCode}: ${res.body}`)
  return res.body
}
