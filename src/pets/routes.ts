import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../store/types.ts'
import { createPet } from './create-pet.ts'
import { getPet } from './get-pet.ts'
import { purgeExpiredIdempotencyRecords } from './idempotency.ts'
import { listPets } from './list-pets.ts'

/** What the pet operations need from the app: each takes the part it uses. */
export interface PetRoutesOptions {
  store: Store
  now: () => number
  publicUrl?: string
  /** How long an Idempotency-Key is remembered (IDEMPOTENCY_TTL_HOURS). */
  idempotencyTtlHours: number
  deprecatedAt: Date
  sunsetAt: Date
  /** petstore_pets_created_total, counted by createPet. */
  petsCreated: { inc (): void }
}

/**
 * The operations of the interface, in the order the OpenAPI document lists them: each module
 * makes its route (method, URL, schema, the scope it needs, whether its replies may be kept,
 * handler), and the scope they are registered in decides what runs before them (the bearer check).
 */
export const petRoutes = fp(async function petRoutes (app: FastifyInstance, options: PetRoutesOptions) {
  const { replyCache } = app
  const operations = [listPets({ ...options, replyCache }), createPet(options), getPet({ ...options, replyCache })]
  // Each is typed by its own schema; the router takes any route.
  for (const operation of operations) app.route(operation as RouteOptions)
  purgeExpiredIdempotencyRecords(app, options.store, options.now)
}, { name: 'pet-routes', dependencies: ['method-not-allowed', 'reply-cache'] })
