export { createPetstoreClient } from './client.ts'
export type {
  Answer, CallOptions, CallResult, CreateOptions, ListOptions, ListPetsParams, NewPet, Pet, PetPage, PetsApi, PetStatus, PetstoreClient, PetstoreClientOptions, WithMeta
} from './client.ts'
export { PetstoreError } from './errors.ts'
export type { ErrorCode, ErrorDetail } from './errors.ts'
export type { Int64Input, Int64Mode } from './json.ts'
export type { RateLimit, ResponseMeta } from './meta.ts'
export type { CacheOptions } from './reply-cache.ts'
export type { RetryOptions } from './retry.ts'
export type { components, operations, paths } from './generated/openapi.ts'
