import type { FastifyRequest } from 'fastify'
import { API_KEY_PATTERN, hashApiKey, KEY_LENGTH } from './keys.ts'
import type { ApiKeyRecord, Store } from '../store/types.ts'
import { keyCache } from './key-cache.ts'

// The scheme's name in any case (RFC 9110 section 11.1), then a key in its one form: tested
// without taking the key out by a capture, as the key is the header's last KEY_LENGTH characters.
const BEARER_WITH_KEY = new RegExp(`^(?i:bearer) +${API_KEY_PATTERN.source.slice(1)}`)
const BEARER_SCHEME = /^bearer(?: |$)/i

/** RFC 6750 section 3.1: error="invalid_token" only when a bearer token was tried. */
export const MISSING_KEY = 'Bearer realm="petstore"'
export const INVALID_KEY = 'Bearer realm="petstore", error="invalid_token"'

/** A request's usable key, or, when it has none, the challenge a 401 would carry. */
export type Caller = { key: ApiKeyRecord, challenge?: undefined } | { key?: undefined, challenge: string }

export function isUsable (key: ApiKeyRecord, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now)
}

/**
 * Finds who sent a request from its Authorization header, by the key's SHA-256 hash. Used by
 * the bearer check of the pet operations and by the budget of the open surface, which share
 * one key cache.
 */
export function callers (store: Store, keyCacheTtlMs: number) {
  const keys = keyCache(store, keyCacheTtlMs)
  return async function identify (request: FastifyRequest, at: number): Promise<Caller> {
    // HTTP strips surrounding whitespace from field values; inject does not, so trim alike.
    const header = request.headers.authorization?.trim()
    if (!header) return { challenge: MISSING_KEY }
    if (!BEARER_WITH_KEY.test(header)) return { challenge: BEARER_SCHEME.test(header) ? INVALID_KEY : MISSING_KEY }
    const hash = hashApiKey(header.slice(-KEY_LENGTH))
    // Most requests find their key in memory and wait for nothing.
    const key = keys.cached(hash, at) ?? await keys.lookUp(hash, at)
    return key && isUsable(key, at) ? { key } : { challenge: INVALID_KEY }
  }
}

export type Identify = ReturnType<typeof callers>
