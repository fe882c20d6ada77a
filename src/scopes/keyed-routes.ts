import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { admitKey, bearerAuth, countErrorsOfConditionalRequests } from '../auth/bearer.ts'
import { petRoutes } from '../pets/routes.ts'
import { HOOKS_EVERY_REQUEST } from './hooks-every-request.ts'

/** The pet operations, under /v1: a usable key or 401, then the key's rate limit and scope. */
export const keyedRoutes = fp(async function keyedRoutes (app: FastifyInstance) {
  app.addHook('onRequest', bearerAuth(app))
  app.addHook('onRequest', admitKey(app.limits))
  app.addHook('onError', countErrorsOfConditionalRequests(app.limits))
  await app.register(petRoutes)
}, {
  name: 'keyed-routes',
  encapsulate: true,
  decorators: { fastify: ['keys', 'store', 'now', 'limits'], request: ['apiKeyId', 'keyLineageId', 'keyScope', 'keyCountDeferred'] },
  dependencies: HOOKS_EVERY_REQUEST
})
