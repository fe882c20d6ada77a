import type { FastifyInstance, FastifyReply } from 'fastify'
import { A_YEAR_SECONDS, finalFor, replyTagged, REVALIDATE_EACH_TIME, tagged, type TaggedJson } from '../http/conditional-requests.ts'
import { invalidRequest } from '../http/errors.ts'
import { decodeCursor, encodeCursor } from '../contract/int64.ts'
import { nextLink, validatorHeaders } from '../contract/response-headers.ts'
import { ConditionalHeadersSchema, LIST_LIMIT_DEFAULT, ListPetsQuerySchema, type PetStatus } from '../contract/schemas.ts'
import { baseUrl } from './base-url.ts'
import { commonErrors, error, notModified, type Operation, response } from './operation.ts'
import { serialize } from './reply-cache.ts'

const pageValidator = validatorHeaders('A page with a next page never changes: `private, max-age=31536000, immutable`. The last page can still grow: `private, no-cache` (stored by the client, revalidated each time with `If-None-Match`).')

export const listPetsSchema = {
  operationId: 'listPets',
  tags: ['animals'],
  summary: 'List all animals',
  description: 'Returns a page of animals in ascending id order. When more follow, the `Link` header carries `rel="next"`; following it from any page visits every matching animal exactly once. The body stays a plain array.',
  security: [{ bearerAuth: [] }],
  querystring: ListPetsQuerySchema,
  headers: ConditionalHeadersSchema,
  response: {
    200: response('Success', 'Pets', { ...pageValidator, ...nextLink }),
    304: notModified({ ...pageValidator, ...nextLink }),
    400: error('`limit`, `status` or `cursor` is invalid, or `Authorization` was sent more than once (added by this service).'),
    ...commonErrors()
  }
}

/** A page as it is sent: its JSON and tag, and the cursor of the next page when there is one. */
interface Page extends TaggedJson { nextCursor?: string }

// A full page is final where ids follow commit order (reply-cache.ts); the last page never is.
const FULL_PAGE = finalFor(A_YEAR_SECONDS)

/** GET /pets: a page of pets in id order, the next one announced in a Link header. */
export function listPets ({ store, config: { PUBLIC_URL: publicUrl }, replyCache, limits }: FastifyInstance): Operation<typeof listPetsSchema> {
  // Any key may list; a full page can never change, so it may be kept (reply-cache.ts).
  const config = { scope: 'read', cacheable: true, conditional: true } as const
  const fullPage = store.idsFollowCommitOrder ? FULL_PAGE : REVALIDATE_EACH_TIME
  const pages = replyCache.keep<string, Page>(config, 'list', (page) => page.json)

  /** A page from the store, kept when it is full (final, see reply-cache.ts). */
  async function readPage (key: string, limit: number, status: PetStatus | undefined, cursor: string | undefined, reply: FastifyReply): Promise<Page> {
    const afterId = cursor === undefined ? undefined : decodeCursor(cursor)
    if (cursor !== undefined && afterId === undefined) {
      throw invalidRequest('Invalid request: query.cursor is not a cursor this service issued.', [{ field: 'query.cursor', message: 'is not valid' }])
    }
    // One row more than asked tells whether a next page exists without a count query.
    const pets = await store.listPets({ limit: limit + 1, status, afterId })
    if (pets.length <= limit) return tagged(serialize(reply, pets))
    pets.length = limit
    const page = { ...tagged(serialize(reply, pets)), nextCursor: encodeCursor(pets[limit - 1]!.id) }
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
      if (page.nextCursor === undefined) return await replyTagged(request, reply, page, REVALIDATE_EACH_TIME, limits)
      // Every part is URL-safe as it is: a number, a status name, a base64url cursor.
      const query = `limit=${limit}${status ? `&status=${status}` : ''}&cursor=${page.nextCursor}`
      reply.header('link', `<${baseUrl(request, publicUrl)}/pets?${query}>; rel="next"`)
      return await replyTagged(request, reply, page, fullPage, limits)
    }
  }
}
