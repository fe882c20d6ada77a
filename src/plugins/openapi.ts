import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export interface OpenApiOptions { publicUrl?: string }

const DESCRIPTION = `The Petstore v1 interface: list, add and fetch animals.

Decisions this service takes where the interface is silent:
- **status default**: when \`status\` is omitted on create, the pet has no status; the field is absent (never \`null\`). Such pets appear in unfiltered lists only.
- **name**: 1 to 200 characters (Unicode code points), not only whitespace, no control characters; stored exactly as sent.
- **categoryId / id**: any signed 64-bit integer, read and written exactly. Numeric strings, fractions and exponents are rejected.
- **Unknown body fields** are ignored and never stored. Unknown query parameters are ignored.
- **Pagination**: keyset on \`id\` ascending; \`Link: <…>; rel="next"\` (RFC 8288) with an opaque \`cursor\` when more follow; the body stays a plain array.
- **Authentication** is checked first: an unauthenticated request gets 401 whatever else is wrong with it.
- **Errors** always carry \`{code, message, status}\`; \`code\` is one of invalid_request 400, unauthorized 401, not_found 404, method_not_allowed 405, request_in_progress 409, gone 410, payload_too_large 413, unsupported_media_type 415, idempotency_conflict 422, rate_limited 429, internal 500, unavailable 503. An optional \`details\` array names offending fields.
- **Limits**: request bodies up to 16 KiB.
- **getPet** is deprecated (\`Deprecation\`, \`Sunset\`, \`Link\` headers on every answer) and answers 410 \`gone\` from its sunset on.
- Not shown by the interface, and not offered: updating or deleting animals, categories, orders, events.`

export const openapi = fp(async function openapi (app: FastifyInstance, options: OpenApiOptions) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Petstore', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: options.publicUrl ?? '/v1', description: options.publicUrl ? 'This deployment' : 'This server, relative to the document' }],
      tags: [{ name: 'animals', description: 'Animal records.' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key issued with `petstore keys create`: `Authorization: Bearer psk_…`.' }
        }
      },
      security: [{ bearerAuth: [] }]
    },
    // Shared schemas keep their own names (Pet, NewPet, Error…) in components.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
    // The servers entry already ends in /v1, so paths are written without it.
    transform: ({ schema, url }) => ({ schema, url: url.replace(/^\/v1(?=\/)/, '') })
  })
}, { name: 'openapi' })

/** Served without auth: the contract is public, the data is not. */
export async function openapiRoute (app: FastifyInstance) {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
