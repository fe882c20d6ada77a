import type { FastifyInstance, FastifyReply } from 'fastify'
import { invalidRequest } from '../http/errors.ts'
import { decodeCursor, encodeCursor } from '../contract/int64.ts'
import { nextLink } from '../contract/response-headers.ts'
import { LIST_LIMIT_DEFAULT, ListPetsQuerySchema, type PetStatus } from '../contract/schemas.ts'
import { baseUrl } from './base-url.ts'
import { commonErrors, error, type Operation, response } from './operation.ts'
import { JSON_TYPE, serialize } from './reply-cache.ts'

export const listPetsSchema = {
  operationId: 'listPets',
  tags: ['animals'],
  summary: 'List all animals',
  description: 'Returns a page of animals in ascending id order. When more follow, the `Link` header carries `rel="next"`; following it from any page visits every matching animal exactly once. The body stays a plain array.',
  security: [{ bearerAuth: [] }],
  querystring: ListPetsQuerySchema,
  response: {
    200: response('Success', 'Pets', nextLink),
    400: error('`limit`, `status` or `cursor` is invalid, or `Authorization` was sent more than once (added by this service).'),
    ...commonErrors()
  }
}

/** A page as it is sent: its JSON, and the cursor of the next page when there is one. */
interface Page { json: string, nextCursor?: string }

/** GET /pets: a page of pets in id order, the next one announced in a Link header. */
export function listPets ({ store, config: { PUBLIC_URL: publicUrl }, replyCache }: FastifyInstance): Operation<typeof listPetsSchema> {
  // Any key may list; a full page can never change, so it may be kept (reply-cache.ts).
  const config = { scope: 'read', cacheable: true } as const
  const pages = replyCache.keep<string, Page>(config, 'list', (page) => page.json)

  /** A page from the store, kept when it is full (final, see reply-cache.ts). */
  async function readPage (key: string, limit: number, status: PetStatus | undefined, cursor: string | undefined, reply: FastifyReply): Promise<Page> {
    const afterId = cursor === undefined ? undefined : decodeCursor(cursor)
    if (cursor !== undefined && afterId === undefined) {
      throw invalidRequest('Invalid request: query.cursor is not a cursor this service issued.', [{ field: 'query.cursor', message: 'is not valid' }])
    }
    // One row more than asked tells whether a next page exists without a count query.
    const pets = await store.listPets({ limit: limit + 1, status, afterId })
    if (pets.length <= limit) return { json: serialize(reply, pets) }
    pets.length = limit
    const page = { json: serialize(reply, pets), nextCursor: encodeCursor(pets[limit - 1]!.id) }
    pages?.set(key, page)
    return page
  }

  return {
    method: 'GET',
    url: '/pets',
    schema: listPetsSchema,
    config,
    // Named: a trace shows it as the span 'handler - listPets'.
    handler: async function listPets (request, reply) {
      // The validator always sets limit (its default); the type only knows the query may omit it.
      const { limit = LIST_LIMIT_DEFAULT, status, cursor } = request.query
      const key = `${limit}|${status ?? ''}|${cursor ?? ''}`
      const page = pages?.get(key) ?? await readPage(key, limit, status, cursor, reply)
      if (page.nextCursor !== undefined) {
        // Every part is URL-safe as it is: a number, a status name, a base64url cursor.
        const query = `limit=${limit}${status ? `&status=${status}` : ''}&cursor=${page.nextCursor}`
        reply.header('link', `<${baseUrl(request, publicUrl)}/pets?${query}>; rel="next"`)
      }
      reply.type(JSON_TYPE)
      return page.json
    }
  }
}
