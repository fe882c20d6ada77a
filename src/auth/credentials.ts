/** Reading the Authorization header: shared by the bearer check and the public routes' rate limit. */
import type { FastifyRequest } from 'fastify'
import { API_KEY_PATTERN, KEY_LENGTH } from './api-key.ts'
import type { ApiKeyRecord } from '../store/types.ts'

// The scheme's name in any case (RFC 9110 section 11.1), then a key in its one form: tested
// without taking the key out by a capture, as the key is the header's last KEY_LENGTH characters.
const BEARER_WITH_KEY = new RegExp(`^(?i:bearer) +${API_KEY_PATTERN.source.slice(1)}`)
const BEARER_SCHEME = /^bearer(?: |$)/i

/** RFC 6750 section 3.1: error="invalid_token" only when a bearer token was tried. */
export const MISSING_KEY = 'Bearer realm="petstore"'
export const INVALID_KEY = 'Bearer realm="petstore", error="invalid_token"'

export function isUsable (key: ApiKeyRecord, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now)
}

/**
 * What a request's Authorization header holds: a key in its one form (looked up by the key
 * cache, which hashes it only when the key is not in memory), or the challenge a 401 would carry.
 */
export type Credentials = { key: string, challenge?: undefined } | { key?: undefined, challenge: string }

const AS_SENT = 'Bearer '

/**
 * The key of an Authorization header in the form nearly every client sends, `Bearer <key>`,
 * unchecked: only to find a key the key cache holds, which was checked when it was looked up.
 * Any other header, or a key not in memory, goes through credentialsOf.
 */
export function keyAsSent (request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  return header !== undefined && header.length === AS_SENT.length + KEY_LENGTH && header.startsWith(AS_SENT) ? header.slice(AS_SENT.length) : undefined
}

export function credentialsOf (request: FastifyRequest): Credentials {
  // HTTP strips surrounding whitespace from field values; inject does not, so trim alike.
  const header = request.headers.authorization?.trim()
  if (!header) return { challenge: MISSING_KEY }
  if (!BEARER_WITH_KEY.test(header)) return { challenge: BEARER_SCHEME.test(header) ? INVALID_KEY : MISSING_KEY }
  return { key: header.slice(-KEY_LENGTH) }
}
