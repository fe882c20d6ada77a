import { Type } from 'typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { emptyBody } from '../http/empty-bodies.ts'
import { ApiError } from '../http/errors.ts'
import { idempotentReplayed, location, retryAfter } from '../contract/response-headers.ts'
import { BODY_LIMIT_TEXT, type NewPet, type Pet } from '../contract/schemas.ts'
import { baseUrl } from './base-url.ts'
import { fingerprintOf, HOUR_MS, IDEMPOTENCY_KEY_PATTERN, parseIdempotencyKey } from './idempotency.ts'
import { commonErrors, error, type Operation, response } from './operation.ts'

export function createPetSchema (idempotencyTtlHours: number) {
  return {
    operationId: 'createPet',
    tags: ['animals'],
    summary: 'Add an animal',
    description: 'Adds an animal. `name` and `categoryId` are required; unknown fields are ignored and never stored. `categoryId` is read exactly over the whole int64 range; numeric strings and fractions are rejected.',
    security: [{ bearerAuth: [] }],
    headers: Type.Object({
      'Idempotency-Key': Type.Optional(Type.String({
        pattern: IDEMPOTENCY_KEY_PATTERN,
        maxLength: 512,
        description: `Makes the create safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, as a quoted string or bare. A repeat with the same key and the same body, by the same API key or a key rotated from it (\`keys rotate\`), within ${idempotencyTtlHours} hours creates nothing and gets the first response again, with \`Idempotent-Replayed: true\`. The same key with another body is 422. Keys of other API keys are never seen. Make a fresh key for each new animal, such as a new random UUID (\`crypto.randomUUID()\`), and send it again only to retry that same create.`
        // No example: the docs page would pre-fill it, and every visitor's request would then
        // replay the first visitor's pet or get 422.
      }))
    }),
    // The shared NewPet by name, so the document describes it once (components.schemas).
    body: Type.Unsafe<NewPet>(Type.Ref('NewPet')),
    response: {
      201: response('Animal added and durably stored: sent only once the commit holding it is on stable storage. The body carries the assigned `id`. A replay of an earlier create carries the same body and `Location`.', 'Pet', { ...location, ...idempotentReplayed }),
      400: error('The body lacks required fields, holds invalid values or is not valid JSON, `Idempotency-Key` is malformed, or `Authorization` was sent more than once.'),
      403: error('The API key is read-only (`forbidden`): adding an animal needs a write key. Checked after the key and before the body, so a read key gets 403 whatever body it sends.'),
      409: error('Another request with the same `Idempotency-Key` is still being processed; retry after `Retry-After` seconds.', retryAfter),
      413: error(`The body is larger than ${BODY_LIMIT_TEXT}.`),
      415: error('The body is not application/json.'),
      422: error('The `Idempotency-Key` was already used, by this API key or another key of its rotation chain, with a different body.'),
      ...commonErrors(),
      503: error('The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds. Also when the store could not confirm the animal was written to stable storage: it may then exist, and a retry with the same `Idempotency-Key` creates it at most once.', retryAfter)
    }
  }
}

/**
 * POST /pets: stores the pet and replies with it and its id; at most once per Idempotency-Key
 * (remembered for IDEMPOTENCY_TTL_HOURS). Counts each pet stored, never a replay, in
 * petstore_pets_created_total.
 */
export function createPet ({ store, now, config, metrics }: FastifyInstance): Operation<ReturnType<typeof createPetSchema>> {
  const { IDEMPOTENCY_TTL_HOURS: idempotencyTtlHours, PUBLIC_URL: publicUrl } = config
  const { petsCreated } = metrics
  const idempotencyTtlMs = idempotencyTtlHours * HOUR_MS

  /** The first request with a key creates; a repeat with the same body replays that reply. */
  async function createOnce (request: FastifyRequest, reply: FastifyReply, pet: NewPet, header: string): Promise<Pet> {
    // The header schema already checked the syntax; the key is its unquoted text.
    const key = parseIdempotencyKey(header)!
    const at = now()
    const result = await store.createPetIdempotently(pet, {
      keyLineageId: request.keyLineageId!,
      key,
      fingerprint: fingerprintOf(pet),
      now: new Date(at).toISOString(),
      expiresAt: new Date(at + idempotencyTtlMs).toISOString()
    })
    if (result.outcome === 'conflict') {
      throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different body; use a new key for a new request.')
    }
    if (result.outcome === 'in_progress') {
      throw new ApiError('request_in_progress', 'A request with this Idempotency-Key is still being processed; retry after the time in Retry-After.', { headers: { 'retry-after': '1' } })
    }
    if (result.outcome === 'replayed') reply.header('idempotent-replayed', 'true')
    else petsCreated.inc()
    return result.pet
  }

  async function createNew (pet: NewPet): Promise<Pet> {
    const created = await store.createPet(pet)
    petsCreated.inc()
    return created
  }

  return {
    method: 'POST',
    url: '/pets',
    schema: createPetSchema(idempotencyTtlHours),
    // The bearer check refuses read keys here, before the body is read. A new pet changes no
    // reply already kept: it gets a larger id than every pet before it (reply-cache.ts).
    config: { scope: 'write', cacheable: false },
    preParsing: emptyBody,
    // Named: a trace shows it as the span 'handler - createPet'.
    handler: async function createPet (request, reply) {
      const header = request.headers['idempotency-key']
      const pet = typeof header === 'string'
        ? await createOnce(request, reply, request.body, header)
        : await createNew(request.body)
      reply.code(201).header('location', `${baseUrl(request, publicUrl)}/pets/${pet.id}`)
      return pet
    }
  }
}
