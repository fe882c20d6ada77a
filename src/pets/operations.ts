import { IDEMPOTENCY_KEY_PATTERN } from './idempotency.ts'
import { ListPetsQuerySchema, PetIdParamsSchema } from '../contract/schemas.ts'
import {
  corsHeaders, deprecationHeaders, idempotentReplayed, location, nextLink, rateLimitHeaders, retryAfter, wwwAuthenticate
} from '../contract/response-headers.ts'

/**
 * The OpenAPI side of the three operations: ids, tags, security, and every status and header
 * the service sends. Handlers live in pets.ts; the shapes themselves in schemas.ts.
 */

type Headers = Record<string, unknown>

/** Every answer of an operation may carry the CORS and rate-limit fields. */
const answer = (description: string, $ref: string, headers: Headers = {}) =>
  ({ description, headers: { ...rateLimitHeaders, ...corsHeaders, ...headers }, $ref })
const error = (description: string, headers?: Headers) => answer(description, 'Error', headers)

function commonErrors (extra: Headers = {}) {
  return {
    401: error('Missing or invalid API key.', { ...wwwAuthenticate, ...extra }),
    408: error('The request was not received completely within the request timeout; the connection is closed.', extra),
    429: error('Too many requests: the API key used its budget for the current minute, or this client address failed authentication too often.', { ...retryAfter, ...extra }),
    431: error('The request line and header fields are larger than the server accepts; the connection is closed.', extra),
    500: error('The request failed on the server; the message carries the request id. Never a stack trace.', extra),
    503: error('The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds.', { ...retryAfter, ...extra })
  }
}

export const listPetsSchema = {
  operationId: 'listPets',
  tags: ['animals'],
  summary: 'List all animals',
  description: 'Returns a page of animals in ascending id order. When more follow, the `Link` header carries `rel="next"`; following it from any page visits every matching animal exactly once. The body stays a plain array.',
  security: [{ bearerAuth: [] }],
  querystring: ListPetsQuerySchema,
  response: {
    200: answer('Success', 'Pets', nextLink),
    400: error('`limit`, `status` or `cursor` is invalid (added by this service).'),
    ...commonErrors()
  }
}

export function createPetSchema (idempotencyTtlHours: number) {
  return {
    operationId: 'createPet',
    tags: ['animals'],
    summary: 'Add an animal',
    description: 'Adds an animal. `name` and `categoryId` are required; unknown fields are ignored and never stored. `categoryId` is read exactly over the whole int64 range; numeric strings and fractions are rejected.',
    security: [{ bearerAuth: [] }],
    headers: {
      type: 'object',
      properties: {
        'Idempotency-Key': {
          type: 'string',
          pattern: IDEMPOTENCY_KEY_PATTERN,
          maxLength: 512,
          description: `Makes the create safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, as a quoted string or bare. A repeat with the same key and the same body, by the same API key, within ${idempotencyTtlHours} hours creates nothing and gets the first answer again, with \`Idempotent-Replayed: true\`. The same key with another body is 422. Keys of other API keys are never seen.`,
          examples: ['"8e03978e-40d5-43e8-bc93-6894a57f9324"']
        }
      }
    },
    body: { $ref: 'NewPet' },
    response: {
      201: answer('Animal added and durably stored: sent only once the commit holding it is on stable storage. The body carries the assigned `id`. A replay of an earlier create carries the same body and `Location`.', 'Pet', { ...location, ...idempotentReplayed }),
      400: error('The body lacks required fields, holds invalid values or is not valid JSON, or `Idempotency-Key` is malformed.'),
      409: error('Another request with the same `Idempotency-Key` is still being processed; retry after `Retry-After` seconds.', retryAfter),
      413: error('The body is larger than 16 KiB.'),
      415: error('The body is not application/json.'),
      422: error('The `Idempotency-Key` was already used, by this API key, with a different body.'),
      ...commonErrors(),
      503: error('The store could not be reached within the configured timeouts, or the server is overloaded or shutting down (`unavailable`); retry after `Retry-After` seconds. Also when the store could not confirm the animal was written to stable storage: it may then exist, and a retry with the same `Idempotency-Key` creates it at most once.', retryAfter)
    }
  }
}

export function getPetSchema (sunset: Date) {
  const deprecation = deprecationHeaders(sunset)
  return {
    operationId: 'getPet',
    tags: ['animals'],
    summary: 'Get an animal (deprecated)',
    description: `Deprecated: to be removed on ${sunset.toISOString().slice(0, 10)}; use \`GET /pets\` with the \`status\` filter instead. Every answer carries \`Deprecation\`, \`Sunset\` and \`Link\`. From the sunset instant on, the answer is 410 \`gone\`.`,
    deprecated: true,
    security: [{ bearerAuth: [] }],
    params: PetIdParamsSchema,
    response: {
      200: answer('Animal found.', 'Pet', deprecation),
      400: error('`petId` is not a signed 64-bit integer (added by this service).', deprecation),
      404: error('The requested resource could not be found.', deprecation),
      410: error('The operation has passed its sunset date and is removed.', deprecation),
      ...commonErrors(deprecation)
    }
  }
}
