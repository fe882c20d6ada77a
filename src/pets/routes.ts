import type { FastifyInstance } from 'fastify'
import type { Store } from '../store/types.ts'
import type { AnswerCacheCounters, AnswerCacheLimits } from './answer-cache.ts'
import { createPet } from './create-pet.ts'
import { getPet } from './get-pet.ts'
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
  /**
   * How many full pages, and as many found pets, to keep serialized (ANSWER_CACHE_ENTRIES), in
   * how many bytes together (ANSWER_CACHE_MAX_BYTES); either at 0 turns the cache off.
   */
  cacheLimits: AnswerCacheLimits
  /** The answer cache's hits and misses, by cache. */
  cacheCounters: AnswerCacheCounters
}

/** The three operations of the interface, in the order the OpenAPI document lists them. */
export async function petRoutes (app: FastifyInstance, options: PetRoutesOptions) {
  await app.register(listPets, options)
  await app.register(createPet, options)
  await app.register(getPet, options)
}
