import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { admitKey } from '../auth/bearer.ts'
import { publicRoutesLimit } from '../auth/public-routes.ts'
import { notFoundBeforeBody, notFoundHandler } from '../http/errors.ts'
import { docsRoutes } from '../ops/docs.ts'
import { openapiRoute } from '../ops/openapi.ts'
import { HOOKS_EVERY_REQUEST } from './hooks-every-request.ts'

/**
 * The routes that need no key: the docs page and the OpenAPI document. Every request is
 * counted, unknown paths included: they belong to this scope (its not-found handler), so its
 * hooks count them, and notFoundBeforeBody replies to them before the handler would, and before
 * any body is read.
 */
export const publicRoutes = fp(async function publicRoutes (app: FastifyInstance) {
  app.addHook('onRequest', publicRoutesLimit(app))
  app.addHook('onRequest', admitKey(app.limits))
  app.addHook('onRequest', notFoundBeforeBody)
  app.setNotFoundHandler(notFoundHandler)
  await app.register(docsRoutes)
  await app.register(openapiRoute, { prefix: '/v1', publicUrl: app.config.PUBLIC_URL, stagingUrl: app.config.STAGING_URL })
}, {
  name: 'public-routes',
  encapsulate: true,
  decorators: { fastify: ['keys', 'now', 'limits', 'config'], request: ['apiKeyId', 'keyScope', 'keyCountDeferred'] },
  dependencies: HOOKS_EVERY_REQUEST
})
