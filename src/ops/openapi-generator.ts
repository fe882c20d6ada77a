import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { KeyScope } from '../store/types.ts'
import { rawJson, servers } from './openapi.ts'

/**
 * Writes the OpenAPI document from the routes' own schemas: `npm run openapi` runs it to
 * rewrite openapi.json, and a test fails when the committed file differs from what it writes.
 * The service serves the committed file (ops/openapi.ts) and never loads this module:
 * describing the routes at every start would load @fastify/swagger and the YAML writer it
 * brings, and slow every start, for a document that only changes with the code.
 */

const DESCRIPTION = `The Petstore v1 interface: list, add and fetch animals.

Decisions this service takes where the interface is silent:
- **status default**: when \`status\` is omitted on create, the pet has no status; the field is absent (never \`null\`). Such pets appear in unfiltered lists only.
- **name**: 1 to 200 characters (Unicode code points), not only whitespace, no control characters (U+0000–U+001F, U+007F–U+009F), no lone surrogates; stored exactly as sent. A body that is not valid UTF-8 is 400.
- **categoryId / id**: any signed 64-bit integer, read and written exactly. Numeric strings, fractions, exponents and values outside the range are rejected. JavaScript's JSON.parse, and generators that type them as \`number\`, round values beyond 2^53: use a lossless JSON parser or @petstore/client.
- **Unknown body fields** are ignored and never stored. Unknown query parameters are ignored.
- **Paths**: \`/pets/\` with a trailing slash names no resource: 404 \`not_found\` for every method (after authentication), never a 400 about \`petId\`.
- **Methods**: a method a path does not serve (TRACE and QUERY included) is 405 \`method_not_allowed\` with \`Allow\` and the Error body, never an echo of the request; OPTIONS gets 204 only as a CORS preflight, any other OPTIONS is 405.
- **Pagination**: keyset on \`id\` ascending; \`Link: <…>; rel="next"\` (RFC 8288) with an opaque \`cursor\` when more follow; the body stays a plain array.
- **Authentication** is checked first: an unauthenticated request gets 401 whatever else is wrong with it. \`Authorization\` sent more than once is 400 \`invalid_request\` (RFC 6750's invalid_request), never judged by one of its values. A key is read or write: a read key lists and gets animals, and its \`createPet\` gets 403 \`forbidden\`, also before the body is looked at.
- **Errors** always carry \`{code, message, status}\`, also when the HTTP parser or a timeout refuses the request; \`code\` is one of invalid_request 400, unauthorized 401, forbidden 403, not_found 404, method_not_allowed 405, request_timeout 408, request_in_progress 409, gone 410, payload_too_large 413, unsupported_media_type 415, idempotency_conflict 422, rate_limited 429, headers_too_large 431, internal 500, unavailable 503. An optional \`details\` array names offending fields. A 5xx never carries a stack, SQL or a library's message.
- **Idempotent creates**: \`POST /pets\` with an \`Idempotency-Key\` (draft-ietf-httpapi-idempotency-key-header) creates at most once per API key and key for 24 hours (a key and the keys rotated from it count as one): a repeat with the same body gets the first response again with \`Idempotent-Replayed: true\`; another body is 422 \`idempotency_conflict\`; a repeat while the first is still running waits for it, or gets 409 \`request_in_progress\`.
- **Rate limits**: per API key (1000 requests a minute by default) and per client address for requests without a valid key (60 a minute): failed authentications, and the docs page, this document, unknown paths and wrong methods called without a key. Every response except those of \`/healthz\` and \`/readyz\` names the limit it counted against in \`RateLimit-Policy\` and \`RateLimit\` (draft-ietf-httpapi-ratelimit-headers), 404s of unknown paths included; over the limit, 429 \`rate_limited\` with \`Retry-After\`.
- **Conditional requests**: every 200 of listPets and getPet carries a strong \`ETag\` made from its body, the same on every instance; \`If-None-Match\` naming it (weak comparison, lists, \`*\`) gets 304 with no body, not counted against the key's rate limit. Errors are never 304. A found animal and a page with a next page never change: \`Cache-Control: private, max-age=31536000, immutable\` (an animal never past getPet's sunset); the last page \`private, no-cache\`; errors \`no-store\`. Never stored by shared caches: keys are bearer tokens.
- **Limits**: request bodies up to 16 KiB (413 as soon as a body passes it; the connection then reads and discards the rest, for at most 2 s and 4 MiB, before it closes, so a client still sending gets the response); header fields up to 16 KiB (431); the headers must arrive within 5 s and the whole request within 10 s (408). An overloaded or stopping server responds 503 \`unavailable\` with \`Retry-After\`.
- **Browsers** on any origin may call the API (CORS \`*\`): keys travel in the \`Authorization\` header, never in cookies.
- **getPet** is deprecated (\`Deprecation\`, \`Sunset\`, \`Link\` headers on every response) and responds 410 \`gone\` from its sunset on.
- Not shown by the interface, and not offered: updating or deleting animals, categories, orders, events.`

const INT64_BOUNDS = { minimum: rawJson('-9223372036854775808'), maximum: rawJson('9223372036854775807') }

/**
 * Every int64 in the document states its range. Added here rather than in schemas.ts, where
 * the validators would read the bounds as doubles; requests are range-checked exactly anyway.
 */
function withInt64Bounds<T> (node: T): T {
  if (Array.isArray(node)) {
    node.forEach(withInt64Bounds)
  } else if (typeof node === 'object' && node !== null) {
    const schema = node as Record<string, unknown>
    if (schema.type === 'integer' && schema.format === 'int64' && schema.minimum === undefined && schema.maximum === undefined) {
      Object.assign(schema, INT64_BOUNDS)
    }
    Object.values(schema).forEach(withInt64Bounds)
  }
  return node
}

interface Described { description?: string, $ref?: string }
interface Parameter { in: string, name: string, description?: string, schema?: Described }
type Paths = Record<string, Record<string, { parameters?: Parameter[] }>>

/**
 * @fastify/swagger drops what stands beside a $ref (OpenAPI 3.0 forbids it), so a query value
 * naming a shared schema (status: PetStatus) loses its description. OpenAPI 3.1 allows it: the
 * descriptions the routes declare are put back on their parameters.
 */
const refDescriptions = new Map<string, string>()
function keepRefDescriptions (url: string, querystring: unknown) {
  const properties = (querystring as { properties?: Record<string, Described> } | undefined)?.properties ?? {}
  for (const [name, property] of Object.entries(properties)) {
    if (property.$ref !== undefined && property.description !== undefined) refDescriptions.set(`${url} ${name}`, property.description)
  }
}
function withRefDescriptions<T extends { paths?: Paths }> (document: T): T {
  for (const [url, operations] of Object.entries(document.paths ?? {})) {
    for (const parameter of Object.values(operations).flatMap((operation) => operation.parameters ?? [])) {
      const description = refDescriptions.get(`${url} ${parameter.name}`)
      if (parameter.in === 'query' && parameter.description === undefined && description !== undefined) parameter.description = description
    }
  }
  return document
}

/** The operations by operationId, with the key scope each needs (its route's `config.scope`), as registered. */
type OperationScopes = ReadonlyMap<string, KeyScope>

const listed = (ids: string[]) => new Intl.ListFormat('en', { type: 'conjunction' }).format(ids)
const NUMBER_WORDS = ['none', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']

/** Every one of the operations, as a write key may call them: 'createPet', 'both', 'all three'. */
function everyOne (ids: string[]): string {
  if (ids.length <= 1) return ids[0] ?? 'none'
  return ids.length === 2 ? 'both' : `all ${NUMBER_WORDS[ids.length] ?? ids.length}`
}

/** What the bearer scheme says: how a key is sent, and which operations each scope may call. */
function bearerAuthDescription (operations: OperationScopes): string {
  const ids = (scope: KeyScope) => [...operations].filter(([, needs]) => needs === scope).map(([id]) => id)
  const [read, write] = [ids('read'), ids('write')]
  const readKey = read.length === 0 ? 'a read key may call none of them' : `a read key may call ${listed(read)}`
  const refused = write.length === 0 ? '' : `, and gets 403 \`forbidden\` from ${listed(write)}`
  return `An API key issued with \`petstore keys create\`: \`Authorization: Bearer psk_…\`. A key is read or write (\`--scope\`): ${readKey}${refused}; a write key may call ${everyOne([...operations.keys()])}. Send exactly one \`Authorization\` field: a request with two is 400 \`invalid_request\`, whichever holds the key.`
}

interface Components { components?: { securitySchemes?: Record<string, { description?: string }> } }

/** The last touches: int64 bounds, descriptions beside a $ref, the scopes of the operations. */
function finish<T extends object> (document: T, operations: OperationScopes): T {
  const finished = withRefDescriptions(withInt64Bounds(structuredClone(document)))
  const bearer = (finished as Components).components?.securitySchemes?.bearerAuth
  if (bearer !== undefined) bearer.description = bearerAuthDescription(operations)
  return finished
}

/** Registered before the routes, it records them; `app.swagger()` then gives the document. */
export const describeRoutes = fp(async function describeRoutes (app: FastifyInstance) {
  // Each operation's scope, as its route declares it: the bearer scheme's description is made of them.
  const operations = new Map<string, KeyScope>()
  app.addHook('onRoute', ({ schema, config }) => {
    if (typeof schema?.operationId === 'string' && config?.scope !== undefined && schema.hide !== true) operations.set(schema.operationId, config.scope)
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Petstore', version: '1.0.0', description: DESCRIPTION },
      servers: servers(),
      tags: [{ name: 'animals', description: 'Animal records.' }],
      components: {
        securitySchemes: {
          // Its description is written by finish, from the operations' scopes.
          bearerAuth: { type: 'http', scheme: 'bearer' }
        }
      },
      security: [{ bearerAuth: [] }]
    },
    // Shared schemas keep their own names (Pet, NewPet, Error…) in components.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
    // The servers entry already ends in /v1, so paths are written without it.
    transform: ({ schema, url }) => {
      const path = url.replace(/^\/v1(?=\/)/, '')
      keepRefDescriptions(path, schema?.querystring)
      return { schema, url: path }
    },
    transformObject: (document) => 'openapiObject' in document ? finish(document.openapiObject, operations) : document.swaggerObject
  })
}, { name: 'describe-routes' })

/** The document as `npm run openapi` writes it: two-space indents, int64 bounds exact. */
export function documentText (app: FastifyInstance): string {
  return JSON.stringify(app.swagger(), null, 2) + '\n'
}
