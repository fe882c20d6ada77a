import type { XStatic } from 'typebox/schema'

/**
 * Every shape of the interface, declared once: request validation, response serialization,
 * the TypeScript types and the OpenAPI document all come from here. The shapes are plain JSON
 * Schema, and TypeBox infers the types from them at compile time (XStatic): building them
 * with TypeBox's runtime would load some 370 modules at every start, a fifth of start-up.
 */

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/** An int64 as the service holds it: a bigint, written to JSON as an exact integer literal. */
export const Int64 = { type: 'integer', format: 'int64' } as const

export const PET_STATUSES = ['available', 'pending', 'sold'] as const
export const PetStatusSchema = {
  enum: PET_STATUSES,
  $id: 'PetStatus',
  description: 'Availability status of the animal.'
} as const
export type PetStatus = XStatic<typeof PetStatusSchema>

/**
 * 1..200 code points, not only whitespace, no control characters and no lone surrogates
 * (which could not be stored alike in every store).
 */
export const NAME_PATTERN = '^(?!\\s*$)[^\\u0000-\\u001F\\u007F\\uD800-\\uDFFF]+$'

const petName = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: NAME_PATTERN,
  description: "The animal's name: 1 to 200 characters, not only whitespace, no control characters. Stored exactly as sent.",
  examples: ['Rex']
} as const

const categoryId = {
  type: 'integer',
  format: 'int64',
  description: 'Identifier of the category the animal belongs to. Any signed 64-bit integer, read and written exactly.',
  examples: [7]
} as const

export const NewPetSchema = {
  type: 'object',
  required: ['name', 'categoryId'],
  properties: {
    name: petName,
    categoryId,
    status: { $ref: 'PetStatus' }
  },
  $id: 'NewPet',
  description: 'An animal to add. When `status` is omitted the pet has no status. Fields not listed here are ignored and never stored.'
} as const

export const PetSchema = {
  type: 'object',
  required: ['id', 'name', 'categoryId'],
  properties: {
    id: { ...Int64, description: 'Unique identifier assigned by the service on creation.', examples: [1] },
    name: petName,
    categoryId,
    status: { $ref: 'PetStatus' }
  },
  $id: 'Pet',
  description: 'An animal record. `status` is absent when the pet has none.'
} as const

/**
 * An animal as the service holds it: int64 fields are bigints (read exactly from the body's
 * source text, written as exact JSON integers), and status is the named enum PetStatus.
 */
export type Pet = Omit<XStatic<typeof PetSchema>, 'id' | 'categoryId' | 'status'> & { id: bigint, categoryId: bigint, status?: PetStatus }
export type NewPet = Omit<Pet, 'id'>

export const PetsSchema = { type: 'array', items: { $ref: 'Pet' }, $id: 'Pets', maxItems: 100, description: 'A list of animals: at most `limit`, which is at most 100.' } as const

export const ERROR_CODES = {
  invalid_request: 400,
  unauthorized: 401,
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

/** Bounds of the Error body, so that no request can make an answer grow with it. */
export const ERROR_MESSAGE_MAX = 1000
export const ERROR_DETAILS_MAX = 20

export const ErrorSchema = {
  type: 'object',
  required: ['code', 'message', 'status'],
  properties: {
    code: { enum: Object.keys(ERROR_CODES) as ErrorCode[], description: 'Machine-readable error code; fixed per HTTP status.' },
    message: { type: 'string', maxLength: ERROR_MESSAGE_MAX, description: 'Human-readable description.' },
    status: { type: 'integer', format: 'int32', minimum: 400, maximum: 599, description: 'The HTTP status code of the response.' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: {
          field: { type: 'string', maxLength: 100, pattern: '^(body|query|path|header)(\\.[A-Za-z0-9_-]+)*$', description: 'Where the problem is, e.g. `body.name`, `query.limit` or `header.idempotency-key`.' },
          message: { type: 'string', maxLength: 500 }
        }
      },
      maxItems: ERROR_DETAILS_MAX,
      description: 'The offending fields, when the error is about the request.'
    }
  },
  $id: 'Error'
} as const
export type ErrorBody = Omit<XStatic<typeof ErrorSchema>, 'code'> & { code: ErrorCode }

export const ListPetsQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Maximum number of animals returned.' },
    status: { enum: PET_STATUSES, description: 'Only animals with this status are listed.' },
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'Opaque position from a `Link: rel="next"` header. Follow the link rather than building it.'
    }
  }
} as const

export const PetIdParamsSchema = {
  type: 'object',
  required: ['petId'],
  properties: {
    petId: { type: 'integer', format: 'int64', description: 'Identifier of the animal to retrieve.' }
  }
} as const

/** Query and path values as the strict parser hands them to handlers. */
export interface ListPetsQuery { limit: number, status?: PetStatus, cursor?: string }
export interface PetIdParams { petId: bigint }

export const sharedSchemas = [PetStatusSchema, NewPetSchema, PetSchema, PetsSchema, ErrorSchema]
