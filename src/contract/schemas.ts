import { Type, type Static, type TSchemaOptions } from 'typebox'

/**
 * Every shape of the interface, declared once as TypeBox: request validation, response
 * serialization, the TypeScript types (Static, and through @fastify/type-provider-typebox the
 * types of request.query, params and body) and the OpenAPI document all come from here.
 */

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/**
 * Generators (openapi-typescript, @hey-api/openapi-ts, orval) type an int64 as `number`, and
 * JSON.parse rounds it past 2^53: every int64 field's description says so.
 */
const JAVASCRIPT_WARNING = 'JavaScript clients: JSON.parse and generated clients that type this as `number` silently round values beyond 2^53 (9223372036854775807 becomes 9223372036854775808); use a lossless JSON parser or the project\'s client (@petstore/client), which reads it as a bigint.'

/** An int64 as the service holds it: a bigint, read exactly and written as an exact integer literal. */
const int64 = ({ description, ...options }: TSchemaOptions & { description: string }) =>
  Type.Unsafe<bigint>({ type: 'integer', format: 'int64', description: `${description} ${JAVASCRIPT_WARNING}`, ...options })

export const PET_STATUSES = ['available', 'pending', 'sold'] as const
// `type: string` beside the enum: generators and readers see a string type, not an untyped enum.
export const PetStatusSchema = Type.Enum(PET_STATUSES, { $id: 'PetStatus', type: 'string', description: 'Availability status of the animal.' })
export type PetStatus = Static<typeof PetStatusSchema>

/** Other shapes name the shared PetStatus (a $ref in the document); its type is the one it names. */
const petStatusRef = Type.Unsafe<PetStatus>(Type.Ref('PetStatus'))

/**
 * 1..200 code points, not only whitespace, no control characters (Unicode's Cc: C0, DEL and
 * C1) and no lone surrogates (which could not be stored alike in every store). Format
 * characters stay allowed: emoji sequences and several scripts need the zero-width joiners.
 */
export const NAME_PATTERN = '^(?!\\s*$)[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$'

const petName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: NAME_PATTERN,
  description: "The animal's name: 1 to 200 characters (Unicode code points), not only whitespace, no control characters (U+0000–U+001F, U+007F–U+009F) and no lone surrogates. Other characters, format characters such as U+200D included, are allowed. Stored exactly as sent.",
  examples: ['Rex']
})

const categoryId = int64({
  description: 'Identifier of the category the animal belongs to. Any signed 64-bit integer, read and written exactly.',
  examples: [7]
})

/** What a client sends; a stored pet is the same fields and its id. */
const newPetFields = {
  name: petName,
  categoryId,
  status: Type.Optional(petStatusRef)
}

export const NewPetSchema = Type.Object(newPetFields, {
  $id: 'NewPet',
  description: 'An animal to add. When `status` is omitted the pet has no status. Fields not listed here are ignored and never stored.'
})
export type NewPet = Static<typeof NewPetSchema>

export const PetSchema = Type.Object({
  id: int64({ description: 'Unique identifier assigned by the service on creation.', examples: [1] }),
  ...newPetFields
}, {
  $id: 'Pet',
  description: 'An animal record. `status` is absent when the pet has none.'
})
export type Pet = Static<typeof PetSchema>

export const PetsSchema = Type.Array(Type.Ref('Pet'), { $id: 'Pets', maxItems: 100, description: 'A list of animals: at most `limit`, which is at most 100.' })

export const ERROR_CODES = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  request_in_progress: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_conflict: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503
} as const
export type ErrorCode = keyof typeof ERROR_CODES

/** Bounds of the Error body, so that no request can make a reply grow with it. */
export const ERROR_MESSAGE_MAX = 1000
export const ERROR_DETAILS_MAX = 20

/** The largest request body read; a larger one is 413 payload_too_large. */
export const BODY_LIMIT_BYTES = 16 * 1024
/** The same limit as messages and the OpenAPI document write it. */
export const BODY_LIMIT_TEXT = `${BODY_LIMIT_BYTES / 1024} KiB`

export const ErrorSchema = Type.Object({
  code: Type.Enum(Object.keys(ERROR_CODES) as ErrorCode[], { type: 'string', description: 'Machine-readable error code; fixed per HTTP status.' }),
  message: Type.String({ maxLength: ERROR_MESSAGE_MAX, description: 'Human-readable description.' }),
  status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599, description: 'The HTTP status code of the response.' }),
  details: Type.Optional(Type.Array(Type.Object({
    field: Type.String({ maxLength: 100, pattern: '^(body|query|path|header)(\\.[A-Za-z0-9_-]+)*$', description: 'Where the problem is, e.g. `body.name`, `query.limit` or `header.idempotency-key`.' }),
    message: Type.String({ maxLength: 500 })
  }), {
    maxItems: ERROR_DETAILS_MAX,
    description: 'The offending fields, when the error is about the request.'
  }))
}, { $id: 'Error' })
export type ErrorBody = Static<typeof ErrorSchema>

/** How many pets a page holds when the query does not say. */
export const LIST_LIMIT_DEFAULT = 20

export const ListPetsQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: LIST_LIMIT_DEFAULT, description: 'Maximum number of animals returned.' })),
  status: Type.Optional(Type.Unsafe<PetStatus>(Type.Ref('PetStatus', { description: 'Only animals with this status are listed.' }))),
  cursor: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'Opaque position from a `Link: rel="next"` header. Follow the link rather than building it.'
  }))
})

export const PetIdParamsSchema = Type.Object({
  petId: int64({ description: 'Identifier of the animal to retrieve.' })
})

/** The request header of the reads that give validators: it asks for a 304 while nothing changed. */
// An entity tag (RFC 9110 section 8.8.3): optionally weak, quoted, of the characters etagc allows.
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"'

export const ConditionalHeadersSchema = Type.Object({
  'If-None-Match': Type.Optional(Type.String({
    maxLength: 4096,
    // `*`, or a list of entity tags (empty list elements allowed, RFC 9110 section 5.6.1).
    pattern: `^[\\t ]*(?:\\*|[\\t ,]*${ENTITY_TAG}(?:[\\t ]*,[\\t ,]*${ENTITY_TAG})*[\\t ,]*)[\\t ]*$`,
    description: 'RFC 9110 section 13.1.2: entity tags (`ETag`) of replies the client has, comma-separated, or `*`. When one names the current reply (weak comparison), the response is `304` with no body, and is not counted against the API key\'s rate limit. Errors are never `304`. A value that is not `*` or a list of entity tags is 400 `invalid_request`.'
  }))
})

export const sharedSchemas = [PetStatusSchema, NewPetSchema, PetSchema, PetsSchema, ErrorSchema]
