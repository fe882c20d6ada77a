import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { createPet } from './create-pet.ts'
import { getPet } from './get-pet.ts'
import { purgeExpiredIdempotencyRecords } from './idempotency.ts'
import { listPets } from './list-pets.ts'

/**
 * The operations of the interface, in the order the OpenAPI document lists them: each module
 * makes its route (method, URL, schema, the scope it needs, whether its replies may be kept,
 * handler) from the app's services (services.ts), and the scope they are registered in decides
 * what runs before them (the bearer check, scopes/keyed-routes.ts).
 */
export const petRoutes = fp(async function petRoutes (app: FastifyInstance) {
  const operations = [listPets(app), createPet(app), getPet(app)]
  // Each is typed by its own schema; the router takes any route.
  for (const operation of operations) app.route(operation as RouteOptions)
  purgeExpiredIdempotencyRecords(app, app.store, app.now)
}, {
  name: 'pet-routes',
  decorators: { fastify: ['store', 'now', 'config', 'metrics', 'replyCache', 'limits'] },
  dependencies: ['method-not-allowed', 'reply-cache']
})
