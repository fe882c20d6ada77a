import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { limitConnections } from '../src/http/client-connections.ts'
import { cors } from '../src/http/cors.ts'
import { errorReplies } from '../src/http/errors.ts'
import { lifecycle } from '../src/http/lifecycle.ts'
import { lingeringClose } from '../src/http/lingering-close.ts'
import { requestLogging } from '../src/http/logging.ts'
import { methodNotAllowed } from '../src/http/method-not-allowed.ts'
import { securityHeaders } from '../src/http/security-headers.ts'
import { httpMetrics } from '../src/ops/metrics.ts'
import { replyCache } from '../src/pets/reply-cache.ts'
import { keyedRoutes } from '../src/scopes/keyed-routes.ts'
import { publicRoutes } from '../src/scopes/public-routes.ts'
import { services } from '../src/services.ts'
import { buildTestApp, createTestStore, testConfig } from './helpers/app.ts'

/**
 * The app's wiring is declared: each plugin names the plugins and decorators it needs before
 * it, and Fastify refuses to start when the order breaks that. These tests break it on purpose.
 */

test('the app as built starts, its scopes after every plugin whose hooks each request runs', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ url: '/v1/pets', headers: app.auth })
  assert.equal(res.statusCode, 200)
})

test('a plugin registered before the services it uses is refused, naming the missing decorator', async () => {
  const app = Fastify()
  await assert.rejects(async () => { await app.register(replyCache) }, {
    code: 'FST_ERR_PLUGIN_NOT_PRESENT_IN_INSTANCE',
    message: 'The decorator \'store\' required by \'reply-cache\' is not present in Fastify'
  })
})

for (const [name, scope] of [['keyed-routes', keyedRoutes], ['public-routes', publicRoutes]] as const) {
  test(`${name} on an app that has not declared the request's key fields is refused, naming the first`, async () => {
    const app = Fastify()
    for (const service of ['config', 'keys', 'store', 'now', 'limits']) app.decorate(service, null)
    await assert.rejects(async () => { await app.register(scope) }, {
      code: 'FST_ERR_PLUGIN_NOT_PRESENT_IN_INSTANCE',
      message: `The decorator 'apiKeyId' required by '${name}' is not present in Request`
    })
  })
}

for (const [name, scope] of [['keyed-routes', keyedRoutes], ['public-routes', publicRoutes]] as const) {
  test(`${name} registered before a plugin whose hooks every request runs is refused, naming it`, async (t) => {
    const { store, cleanup } = await createTestStore()
    const app = Fastify()
    // The store is closed by the app's services, which never got to start.
    t.after(cleanup)
    await app.register(services, { config: testConfig(), store, now: Date.now })
    await app.register(methodNotAllowed)
    await app.register(cors)
    await assert.rejects(async () => { await app.register(scope) }, {
      code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
      message: `The dependency 'connection-limits' of plugin '${name}' is not registered`
    })
  })
}

test('a scope registered above one plugin of every request (load shedding moved below it) is refused, naming that plugin', async (t) => {
  const { store, cleanup } = await createTestStore()
  const app = Fastify()
  t.after(cleanup)
  await app.register(services, { config: testConfig(), store, now: Date.now })
  await app.register(limitConnections)
  await app.register(errorReplies)
  await app.register(lingeringClose)
  await app.register(requestLogging, { destination: { write: () => true } })
  await app.register(methodNotAllowed)
  await app.register(httpMetrics)
  await app.register(cors)
  await app.register(lifecycle)
  await app.register(securityHeaders)
  await app.register(replyCache)
  await assert.rejects(async () => { await app.register(keyedRoutes, { prefix: '/v1' }) }, {
    code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
    message: 'The dependency \'load-shedding\' of plugin \'keyed-routes\' is not registered'
  })
})
