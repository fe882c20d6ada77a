import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, invalidRequest } from '../http/errors.ts'
import { fingerprintOf, parseIdempotencyKey } from './idempotency.ts'
import { decodeCursor, encodeCursor } from '../contract/int64.ts'
import { GET_PET_DOCS_FRAGMENT } from '../ops/docs.ts'
import type { ListPetsQuery, NewPet, Pet, PetIdParams } from '../contract/schemas.ts'
import type { Store } from '../store/types.ts'
import { createPetSchema, getPetSchema, listPetsSchema } from './operations.ts'
import { FinalAnswers } from './answer-cache.ts'

export interface PetRoutesOptions {
  store: Store
  now: () => number
  idempotencyTtlMs: number
  publicUrl?: string
  deprecatedAt: Date
  sunsetAt: Date
  /** How many final pages and pets to keep serialized; 0 turns the cache off. */
  cacheEntries: number
}

interface CachedPage { json: string, nextCursor?: string }
const JSON_TYPE = 'application/json; charset=utf-8'
// The route's response schema serializer (fast-json-stringify) always produces a string.
const serialize = (reply: FastifyReply, payload: unknown) => reply.serialize(payload) as string

// A host name, IPv4 or [IPv6] literal, and an optional port: nothing that could end a URI.
const PLAIN_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/

/**
 * The base address incl. /v1 for Link and Location: PUBLIC_URL, else the request's own host.
 * A Host header that is not a plain host[:port] is never echoed (it could inject links into
 * answers that caches keep); the answer then uses the relative /v1.
 */
export function baseUrl (request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl
  return PLAIN_HOST.test(request.host) ? `${request.protocol}://${request.host}/v1` : '/v1'
}

export async function petRoutes (app: FastifyInstance, options: PetRoutesOptions) {
  const { store, now, publicUrl } = options
  // Only where ids follow commit order is a full page final (see FinalAnswers).
  const cacheEntries = store.idsFollowCommitOrder ? options.cacheEntries : 0
  const pages = new FinalAnswers<CachedPage>(cacheEntries)
  const found = new FinalAnswers<string>(cacheEntries)

  // A first page's key is one of at most 100 limits × 4 statuses: each is joined once, and
  // the cache finds it without joining and hashing a new string on every request.
  const firstPageKeys = new Map<number, Map<string, string>>()
  function firstPageKey (limit: number, status: ListPetsQuery['status']): string {
    let byStatus = firstPageKeys.get(limit)
    if (byStatus === undefined) firstPageKeys.set(limit, byStatus = new Map())
    const statusText = status ?? ''
    let key = byStatus.get(statusText)
    if (key === undefined) byStatus.set(statusText, key = `${limit}|${statusText}|`)
    return key
  }

  /** A page from the store, kept when final; the cache is asked first by the route. */
  async function readPage (cacheKey: string, limit: number, status: ListPetsQuery['status'], cursor: string | undefined, reply: FastifyReply): Promise<CachedPage> {
    const afterId = cursor === undefined ? undefined : decodeCursor(cursor)
    if (cursor !== undefined && afterId === undefined) {
      throw invalidRequest('Invalid request: query.cursor is not a cursor this service issued.', [{ field: 'query.cursor', message: 'is not valid' }])
    }
    // One row more than asked tells whether a next page exists without a count query.
    const pets = await store.listPets({ limit: limit + 1, status, afterId })
    if (pets.length <= limit) return { json: serialize(reply, pets) }
    pets.length = limit
    const page = { json: serialize(reply, pets), nextCursor: encodeCursor(pets[limit - 1]!.id) }
    pages.set(cacheKey, page)
    return page
  }

  function sendPage (request: FastifyRequest<{ Querystring: ListPetsQuery }>, reply: FastifyReply, page: CachedPage) {
    if (page.nextCursor) {
      const { limit, status } = request.query
      // Every part is URL-safe as it is: a number, a status name, a base64url cursor.
      const query = `limit=${limit}${status ? `&status=${status}` : ''}&cursor=${page.nextCursor}`
      reply.header('link', `<${baseUrl(request, publicUrl)}/pets?${query}>; rel="next"`)
    }
    reply.type(JSON_TYPE).send(page.json)
  }

  // The handlers answer from the cache at once and return a promise only when they read the
  // store: most answers then cost no promise and no extra turn of the microtask queue.
  app.get<{ Querystring: ListPetsQuery }>('/pets', { schema: listPetsSchema }, (request, reply) => {
    const { limit, status, cursor } = request.query
    const cacheKey = cursor === undefined ? firstPageKey(limit, status) : `${limit}|${status ?? ''}|${cursor}`
    const cached = pages.get(cacheKey)
    if (cached) {
      sendPage(request, reply, cached)
      return
    }
    return readPage(cacheKey, limit, status, cursor, reply).then((page) => { sendPage(request, reply, page) })
  })

  app.post<{ Body: NewPet }>('/pets', { schema: createPetSchema(options.idempotencyTtlMs / 3_600_000) }, async (request, reply) => {
    const header = request.headers['idempotency-key']
    const pet = typeof header === 'string'
      ? await createOnce(request, reply, header)
      : await store.createPet(request.body)
    reply.code(201).header('location', `${baseUrl(request, publicUrl)}/pets/${pet.id}`)
    return pet
  })

  /** The first request with a key creates; a repeat with the same body replays that answer. */
  async function createOnce (request: FastifyRequest<{ Body: NewPet }>, reply: FastifyReply, header: string): Promise<Pet> {
    // The header schema already checked the syntax; the key is its unquoted text.
    const key = parseIdempotencyKey(header)!
    const at = now()
    const result = await store.createPetIdempotently(request.body, {
      apiKeyId: request.apiKeyId!,
      key,
      fingerprint: fingerprintOf(request.body),
      now: new Date(at).toISOString(),
      expiresAt: new Date(at + options.idempotencyTtlMs).toISOString()
    })
    if (result.outcome === 'conflict') {
      throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different body; use a new key for a new request.')
    }
    if (result.outcome === 'in_progress') {
      throw new ApiError('request_in_progress', 'A request with this Idempotency-Key is still being processed; retry after the time in Retry-After.', { headers: { 'retry-after': '1' } })
    }
    if (result.outcome === 'replayed') reply.header('idempotent-replayed', 'true')
    return result.pet
  }

  const sunsetHeader = options.sunsetAt.toUTCString()
  const deprecationHeader = `@${Math.floor(options.deprecatedAt.getTime() / 1000)}`
  const sunsetMs = options.sunsetAt.getTime()
  // Almost every answer names the same base address: its Link value is made once.
  const deprecationLinks = new Map<string, string>()
  const deprecationLink = (base: string) => {
    let link = deprecationLinks.get(base)
    if (link === undefined) {
      link = `<${base}/pets>; rel="successor-version", <${base.replace(/\/v1$/, '')}/docs#${GET_PET_DOCS_FRAGMENT}>; rel="deprecation"; type="text/html"`
      if (deprecationLinks.size < 100) deprecationLinks.set(base, link)
    }
    return link
  }

  app.get<{ Params: PetIdParams }>('/pets/:petId', {
    schema: getPetSchema(options.sunsetAt),
    // onSend runs for every answer of this route, errors and 401s included.
    onSend: (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      reply.header('deprecation', deprecationHeader)
      reply.header('sunset', sunsetHeader)
      reply.header('link', deprecationLink(baseUrl(request, publicUrl)))
      done(null, payload)
    },
    preValidation: (_request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      if (now() >= sunsetMs) done(new ApiError('gone', `getPet was removed on ${sunsetHeader}; use GET /pets with the status filter.`))
      else done()
    }
  }, (request, reply) => {
    const id = String(request.params.petId)
    const cached = found.get(id)
    if (cached !== undefined) {
      reply.type(JSON_TYPE).send(cached)
      return
    }
    const pet = store.getPet(request.params.petId)
    if (pet instanceof Promise) return pet.then((read) => { sendPet(reply, id, read) })
    sendPet(reply, id, pet)
  })

  function sendPet (reply: FastifyReply, id: string, pet: Pet | undefined) {
    if (!pet) throw new ApiError('not_found', `No pet has id ${id}.`)
    const json = serialize(reply, pet)
    found.set(id, json)
    reply.type(JSON_TYPE).send(json)
  }
}
