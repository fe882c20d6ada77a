import type { FastifyReply, FastifyRequest } from 'fastify'
import { noneMatchNames, strongTag } from './entity-tags.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Its 200s carry an ETag and it answers a matching If-None-Match with 304: the key's
     * request is then counted only once the reply is known not to be a 304 (auth/bearer.ts).
     */
    conditional?: boolean
  }
}

/** A reply's JSON and its strong entity tag, made together so the tag is made once. */
export interface TaggedJson { json: string, etag: string }

export const tagged = (json: string): TaggedJson => ({ json, etag: strongTag(json) })

/** Whether the request may be answered with a 304: it names tags, on a route that gives them. */
export const isConditional = (request: FastifyRequest) =>
  request.headers['if-none-match'] !== undefined && request.routeOptions.config.conditional === true

/** What the reply needs of the rate limits: the count a conditional request was spared until now (auth/rate-limits.ts). */
interface DeferredCount { countDeferred (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined }

/** Kept replies are sent as they are, with this type: never serialized again. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * The 200 with its validator and caching policy, or, when If-None-Match names its tag, a 304
 * with the same header fields and no body (RFC 9110 section 15.4.5): a client that has the
 * reply pays for nothing. A 304 is not counted against the key; a 200 to a conditional request
 * is counted here, and may still be the 429 (an error is counted as it is replied to, bearer.ts).
 * Only a reply that would be a 200 gets here, so no error is ever turned into a 304.
 */
export function replyTagged (request: FastifyRequest, reply: FastifyReply, body: TaggedJson, cacheControl: string, limits: DeferredCount): string | FastifyReply | Promise<string> {
  // Only the routes that give tags reply with one: the header alone says the request is conditional.
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch === undefined) return sendJson(reply, body, cacheControl)
  if (noneMatchNames(ifNoneMatch, body.etag)) {
    reply.code(304).header('etag', body.etag).header('cache-control', cacheControl)
    // Fastify gives a HEAD the length of what it is sent (0 for nothing), which a 304 may carry
    // only when it is the 200's: a HEAD's 304 says what its 200 would (length and type), as a
    // HEAD does, a GET's nothing. Neither has a body.
    return request.method === 'HEAD' ? reply.type(JSON_TYPE).send(body.json) : reply.send()
  }
  const counting = limits.countDeferred(request, reply)
  return counting === undefined ? sendJson(reply, body, cacheControl) : counting.then(() => sendJson(reply, body, cacheControl))
}

function sendJson (reply: FastifyReply, body: TaggedJson, cacheControl: string): string {
  reply.header('etag', body.etag).header('cache-control', cacheControl).type(JSON_TYPE)
  return body.json
}

/** RFC 9111's usual ceiling for "never changes": a year, in seconds. */
export const A_YEAR_SECONDS = 365 * 24 * 60 * 60

/**
 * A reply that can never change, for `maxAge` seconds: kept by the client without asking
 * again. `private`, as keys are bearer tokens: no shared cache may store a reply to one.
 */
export const finalFor = (maxAge: number) => `private, max-age=${maxAge}, immutable`

/** A reply that may still change (a listing's last page): stored by the client, checked each time. */
export const REVALIDATE_EACH_TIME = 'private, no-cache'
