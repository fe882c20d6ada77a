import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, invalidRequest } from '../errors.ts'
import { decodeCursor, encodeCursor } from '../int64.ts'
import type { ListPetsQuery, NewPet, PetIdParams } from '../schemas.ts'
import type { Store } from '../store/types.ts'
import { createPetSchema, getPetSchema, listPetsSchema } from './pet-operations.ts'

export interface PetRoutesOptions {
  store: Store
  now: () => number
  publicUrl?: string
  deprecatedAt: Date
  sunsetAt: Date
}

/** The base address incl. /v1 for Link and Location: PUBLIC_URL, else the request's own host. */
export function baseUrl (request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}/v1`
}

export async function petRoutes (app: FastifyInstance, options: PetRoutesOptions) {
  const { store, now, publicUrl } = options

  app.get<{ Querystring: ListPetsQuery }>('/pets', { schema: listPetsSchema }, async (request, reply) => {
    const { limit, status, cursor } = request.query
    const afterId = cursor === undefined ? undefined : decodeCursor(cursor)
    if (cursor !== undefined && afterId === undefined) {
      throw invalidRequest('Invalid request: query.cursor is not a cursor this service issued.', [{ field: 'query.cursor', message: 'is not valid' }])
    }
    // One row more than asked tells whether a next page exists without a count query.
    const pets = await store.listPets({ limit: limit + 1, status, afterId })
    if (pets.length > limit) {
      pets.length = limit
      const next = new URLSearchParams({ limit: String(limit) })
      if (status) next.set('status', status)
      next.set('cursor', encodeCursor(pets[limit - 1]!.id))
      reply.header('link', `<${baseUrl(request, publicUrl)}/pets?${next}>; rel="next"`)
    }
    return pets
  })

  app.post<{ Body: NewPet }>('/pets', { schema: createPetSchema }, async (request, reply) => {
    const pet = await store.createPet(request.body)
    reply.code(201).header('location', `${baseUrl(request, publicUrl)}/pets/${pet.id}`)
    return pet
  })

  const sunsetHeader = options.sunsetAt.toUTCString()
  const deprecationHeader = `@${Math.floor(options.deprecatedAt.getTime() / 1000)}`
  const sunsetMs = options.sunsetAt.getTime()

  app.get<{ Params: PetIdParams }>('/pets/:petId', {
    schema: getPetSchema(options.sunsetAt),
    // onSend runs for every answer of this route, errors and 401s included.
    onSend: async (request: FastifyRequest, reply: FastifyReply) => {
      const base = baseUrl(request, publicUrl)
      reply.header('deprecation', deprecationHeader)
      reply.header('sunset', sunsetHeader)
      reply.header('link', `<${base}/pets>; rel="successor-version", <${base.replace(/\/v1$/, '')}/docs#tag/animals/GET/pets/{petId}>; rel="deprecation"; type="text/html"`)
    },
    preValidation: async () => {
      if (now() >= sunsetMs) throw new ApiError('gone', `getPet was removed on ${sunsetHeader}; use GET /pets with the status filter.`)
    }
  }, async (request) => {
    const pet = await store.getPet(request.params.petId)
    if (!pet) throw new ApiError('not_found', `No pet has id ${request.params.petId}.`)
    return pet
  })
}
