import type { FastifyInstance } from 'fastify'
import { A_YEAR_SECONDS, finalFor, replyTagged, tagged, type TaggedJson } from '../http/conditional-requests.ts'
import { ApiError } from '../http/errors.ts'
import { deprecationHeaders, GET_PET_DOCS_FRAGMENT, validatorHeaders } from '../contract/response-headers.ts'
import { ConditionalHeadersSchema, PetIdParamsSchema } from '../contract/schemas.ts'
import { baseUrl } from './base-url.ts'
import { commonErrors, error, notModified, type Operation, response } from './operation.ts'
import { serialize } from './reply-cache.ts'

export function getPetSchema (sunset: Date) {
  const deprecation = deprecationHeaders(sunset)
  const validator = validatorHeaders('`private, max-age=<seconds>, immutable`: a pet never changes, so the client may keep it for a year without asking again, but never past the sunset.')
  return {
    operationId: 'getPet',
    tags: ['animals'],
    summary: 'Get an animal (deprecated)',
    description: `Deprecated: to be removed on ${sunset.toISOString().slice(0, 10)}; use \`GET /pets\` with the \`status\` filter instead. Every response carries \`Deprecation\`, \`Sunset\` and \`Link\`. From the sunset instant on, the response is 410 \`gone\`.`,
    deprecated: true,
    security: [{ bearerAuth: [] }],
    params: PetIdParamsSchema,
    headers: ConditionalHeadersSchema,
    response: {
      200: response('Animal found.', 'Pet', { ...validator, ...deprecation }),
      304: notModified({ ...validator, ...deprecation }),
      400: error('`petId` is not a signed 64-bit integer, or `Authorization` was sent more than once (added by this service).', deprecation),
      404: error('The requested resource could not be found.', deprecation),
      410: error('The operation has passed its sunset date and is removed.', deprecation),
      ...commonErrors(deprecation)
    }
  }
}

/** GET /pets/{petId}: one pet; deprecated from DEPRECATION_DATE, and gone from SUNSET_DATE on. */
export function getPet ({ store, now, config: settings, replyCache, limits }: FastifyInstance): Operation<ReturnType<typeof getPetSchema>> {
  const publicUrl = settings.PUBLIC_URL
  const deprecatedAt = new Date(settings.DEPRECATION_DATE)
  const sunsetAt = new Date(settings.SUNSET_DATE)
  // Any key may read; a found pet can never change, so it may be kept (reply-cache.ts), by the
  // client too, until the operation's sunset.
  const config = { scope: 'read', cacheable: true, conditional: true } as const
  const found = replyCache.keep<number | string, TaggedJson>(config, 'pet', (pet) => pet.json)
  const keptFor = cacheControlUntil(sunsetAt, now)
  const sunsetHeader = sunsetAt.toUTCString()
  const deprecationHeader = `@${Math.floor(deprecatedAt.getTime() / 1000)}`
  const sunsetMs = sunsetAt.getTime()

  // Almost every reply names the same base address: its Link value is made once.
  const deprecationLinks = new Map<string, string>()
  function deprecationLink (base: string): string {
    let link = deprecationLinks.get(base)
    if (link === undefined) {
      link = `<${base}/pets>; rel="successor-version", <${base.replace(/\/v1$/, '')}/docs#${GET_PET_DOCS_FRAGMENT}>; rel="deprecation"; type="text/html"`
      if (deprecationLinks.size < 100) deprecationLinks.set(base, link)
    }
    return link
  }

  return {
    method: 'GET',
    url: '/pets/:petId',
    schema: getPetSchema(sunsetAt),
    config,
    // onSend runs for every reply of this route, errors and 401s included. Both hooks in
    // callback form, as every hook that runs on each reply (http/logging.ts): no promise each.
    onSend: (request, reply, payload, done) => {
      reply.header('deprecation', deprecationHeader)
      reply.header('sunset', sunsetHeader)
      reply.header('link', deprecationLink(baseUrl(request, publicUrl)))
      done(null, payload)
    },
    preValidation: (_request, _reply, done) => {
      if (now() >= sunsetMs) done(new ApiError('gone', `getPet was removed on ${sunsetHeader}; use GET /pets with the status filter.`))
      else done()
    },
    // Named: a trace shows it as the span 'handler - getPet'.
    handler: async function getPet (request, reply) {
      const { petId } = request.params
      const kept = cacheKeyOf(petId)
      let body = found?.get(kept)
      if (body === undefined) {
        const pet = await store.getPet(petId)
        if (!pet) throw new ApiError('not_found', `No pet has id ${petId}.`)
        body = tagged(serialize(reply, pet))
        found?.set(kept, body)
      }
      return await replyTagged(request, reply, body, keptFor(), limits)
    }
  }
}

/**
 * A pet's key in the reply cache: its id as a number when a number holds it exactly, else as
 * text. A Map finds a bigint key several times slower than a number (docs/performance.md).
 */
const cacheKeyOf = (petId: bigint): number | string =>
  petId <= Number.MAX_SAFE_INTEGER && petId >= Number.MIN_SAFE_INTEGER ? Number(petId) : String(petId)

/**
 * The Cache-Control of a found pet: kept a year, or until the sunset when that comes sooner,
 * as the operation then answers 410. The value changes once a second at most, so the last one
 * is reused.
 */
function cacheControlUntil (sunsetAt: Date, now: () => number): () => string {
  const sunsetSeconds = Math.floor(sunsetAt.getTime() / 1000)
  let seconds = -1
  let value = ''
  return () => {
    const left = Math.min(A_YEAR_SECONDS, Math.max(0, sunsetSeconds - Math.ceil(now() / 1000)))
    if (left !== seconds) {
      seconds = left
      value = finalFor(left)
    }
    return value
  }
}
