import { Type } from 'typebox'
import { ListPetsQuerySchema, PetIdParamsSchema } from '../schemas.ts'

/**
 * The OpenAPI side of the three operations: ids, tags, security, and every status and header
 * the service sends. Handlers live in pets.ts; the shapes themselves in schemas.ts.
 */

const error = (description: string, headers?: Record<string, unknown>) =>
  ({ description, ...(headers ? { headers } : {}), $ref: 'Error' })

const wwwAuthenticate = {
  'WWW-Authenticate': { type: 'string', description: 'Bearer realm="petstore", with error="invalid_token" when a bearer token was sent (RFC 6750).' }
}

const commonErrors = {
  401: error('Missing or invalid API key.', wwwAuthenticate),
  500: error('The request failed on the server; the message carries the request id. Never a stack trace.'),
  503: error('The store could not be reached within the configured timeouts (`unavailable`); retry later.', {
    'Retry-After': { type: 'string', description: 'Seconds to wait before retrying.' }
  })
}

const nextLink = {
  Link: {
    type: 'string',
    description: 'RFC 8288 `<…/pets?limit=…&status=…&cursor=…>; rel="next"` when more pets follow. Absent on the last page.'
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
    200: { description: 'Success', headers: nextLink, $ref: 'Pets' },
    400: error('`limit`, `status` or `cursor` is invalid (added by this service).'),
    ...commonErrors
  }
}

export const createPetSchema = {
  operationId: 'createPet',
  tags: ['animals'],
  summary: 'Add an animal',
  description: 'Adds an animal. `name` and `categoryId` are required; unknown fields are ignored and never stored. `categoryId` is read exactly over the whole int64 range; numeric strings and fractions are rejected.',
  security: [{ bearerAuth: [] }],
  body: Type.Ref('NewPet'),
  response: {
    201: {
      description: 'Animal added; the body carries the assigned `id`.',
      headers: { Location: { type: 'string', description: 'Address of the new animal.' } },
      $ref: 'Pet'
    },
    400: error('The body lacks required fields, holds invalid values or is not valid JSON.'),
    ...commonErrors,
    413: error('The body is larger than 16 KiB.'),
    415: error('The body is not application/json.')
  }
}

export function getPetSchema (sunset: Date) {
  const deprecation = {
    Deprecation: { type: 'string', description: 'RFC 9745: `@<unix seconds>`, when getPet was deprecated.' },
    Sunset: { type: 'string', description: `RFC 8594: \`${sunset.toUTCString()}\`, when getPet is removed.` },
    Link: { type: 'string', description: 'The successor (`rel="successor-version"`: `GET /pets` with the `status` filter) and the deprecation notice (`rel="deprecation"`).' }
  }
  return {
    operationId: 'getPet',
    tags: ['animals'],
    summary: 'Get an animal (deprecated)',
    description: `Deprecated: to be removed on ${sunset.toISOString().slice(0, 10)}; use \`GET /pets\` with the \`status\` filter instead. Every answer carries \`Deprecation\`, \`Sunset\` and \`Link\`. From the sunset instant on, the answer is 410 \`gone\`.`,
    deprecated: true,
    security: [{ bearerAuth: [] }],
    params: PetIdParamsSchema,
    response: {
      200: { description: 'Animal found.', headers: deprecation, $ref: 'Pet' },
      400: error('`petId` is not a signed 64-bit integer (added by this service).', deprecation),
      401: error('Missing or invalid API key.', { ...wwwAuthenticate, ...deprecation }),
      404: error('The requested resource could not be found.', deprecation),
      410: error('The operation has passed its sunset date and is removed.', deprecation),
      500: commonErrors[500],
      503: commonErrors[503]
    }
  }
}
