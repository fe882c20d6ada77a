import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { cors } from '../../src/http/cors.ts'
import { errorHandler } from '../../src/http/errors.ts'
import { methodNotAllowed } from '../../src/http/method-not-allowed.ts'
import { assertError } from '../helpers/errors.ts'

/**
 * The 405s, their Allow field, the preflight's methods and the 404 after a collection's slash
 * all come from the routes as registered: a route of a new method changes each of them, and
 * nothing else has to be written.
 */
async function appWithThings () {
  const app = Fastify()
  app.setErrorHandler(errorHandler)
  await app.register(methodNotAllowed)
  await app.register(cors)
  const handler = async () => ({})
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => {
      if (request.headers.authorization === undefined) return await reply.code(401).send({ code: 'unauthorized' })
    })
    scope.get('/things', { schema: { tags: ['things'] } }, handler)
    scope.post('/things', handler)
    scope.get('/things/:thingId', handler)
    scope.patch('/things/:thingId', { schema: { headers: { type: 'object', properties: { 'If-Match': { type: 'string' } } } } }, handler)
  }, { prefix: '/v1' })
  return app
}

test('each path refuses the methods its routes do not serve, with Allow listing those they do', async (t) => {
  const app = await appWithThings()
  t.after(() => app.close())
  const auth = { authorization: 'Bearer x' }
  const refused = async (method: 'PUT' | 'DELETE' | 'PROPFIND', url: string, allow: string) => {
    const res = await app.inject({ method, url, headers: auth })
    assertError(res, 405, 'method_not_allowed', `${method} is not allowed here; allowed: ${allow}.`)
    assert.equal(res.headers.allow, allow)
  }
  await refused('PUT', '/v1/things/1', 'GET, HEAD, PATCH')
  await refused('DELETE', '/v1/things', 'GET, HEAD, POST')
  await refused('PROPFIND', '/v1/things', 'GET, HEAD, POST')
  const served = await app.inject({ method: 'PATCH', url: '/v1/things/1', headers: auth })
  assert.deepEqual([served.statusCode, served.json()], [200, {}])
  // The refusals run the hooks of the scope that serves the path.
  const unauthenticated = await app.inject({ method: 'PUT', url: '/v1/things/1' })
  assert.deepEqual([unauthenticated.statusCode, unauthenticated.json()], [401, { code: 'unauthorized' }])
})

test('a collection\'s path with a trailing slash is 404 pointing to the collection, for every method', async (t) => {
  const app = await appWithThings()
  t.after(() => app.close())
  for (const method of ['GET', 'POST', 'PATCH'] as const) {
    const res = await app.inject({ method, url: '/v1/things/', headers: { authorization: 'Bearer x' } })
    assertError(res, 404, 'not_found', `No route for ${method} /v1/things/; the things are at /v1/things, without the trailing slash.`, { label: method })
  }
})

test('a preflight allows every method the API\'s routes serve, and every request header their schemas declare', async (t) => {
  const app = await appWithThings()
  t.after(() => app.close())
  const res = await app.inject({ method: 'OPTIONS', url: '/v1/things/1', headers: { origin: 'https://example.com', 'access-control-request-method': 'PATCH' } })
  assert.deepEqual([res.statusCode, res.headers['access-control-allow-methods'], res.headers['access-control-allow-headers']],
    [204, 'GET, HEAD, PATCH, POST', 'Authorization, Content-Type, If-Match, X-Request-Id'])
})

test('cors registered after the routes whose headers it allows is refused at start, naming them', async () => {
  const app = Fastify()
  await app.register(methodNotAllowed)
  await app.register(async (scope) => { scope.get('/things', async () => ({})) }, { prefix: '/v1' })
  await app.register(cors)
  await assert.rejects(async () => { await app.ready() }, { message: 'cors is registered after the routes of /v1/things: a preflight would not allow the headers they declare' })
})

test('the order is declared: cors before the record it reads is refused at registration, naming what is missing', async () => {
  const app = Fastify()
  await assert.rejects(async () => { await app.register(cors) }, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: 'The dependency \'method-not-allowed\' of plugin \'cors\' is not registered' })
})
