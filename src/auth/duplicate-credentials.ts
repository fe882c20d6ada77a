import type { FastifyRequest } from 'fastify'
import { ApiError } from '../http/errors.ts'

const AUTHORIZATION = 'authorization'

/**
 * Refuses a request that carries Authorization more than once. Node keeps the first such
 * field in request.headers and drops the others, so the bearer check would silently judge
 * the request by one of its credentials. Authorization is not a list field (RFC 9110 section
 * 11.6.2), and RFC 6750 section 3.1 calls a request that repeats its credentials
 * invalid_request: 400, with no key looked up, so it tells nothing about any key either.
 * request.raw.rawHeaders holds every field as it was sent. The bearer check calls it first.
 */
export function refuseDuplicateCredentials (request: FastifyRequest): void {
  const raw = request.raw.rawHeaders
  let seen = 0
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!
    // The length first: most names differ in it, and lowercasing them would cost a string each.
    if (name.length === AUTHORIZATION.length && name.toLowerCase() === AUTHORIZATION && ++seen > 1) {
      throw new ApiError('invalid_request', 'Authorization was sent more than once; send exactly one: Authorization: Bearer <key>.', {
        details: [{ field: 'header.authorization', message: 'must be sent once' }]
      })
    }
  }
}
