import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { ApiError, errorBody } from '../http/errors.ts'
import { API_KEY_PATTERN, hashApiKey, KEY_LENGTH } from './keys.ts'
import type { ApiKeyRecord, KeyScope, Store } from '../store/types.ts'
import { keyCache } from './key-cache.ts'
import type { AuthLimits } from './rate-limits.ts'

declare module 'fastify' {
  interface FastifyRequest {
    apiKeyId?: number
    /** The first key of the key's rotation chain: Idempotency-Keys are scoped to it. */
    keyLineageId?: number
  }
  /** A route that changes data says so with `config: { scope: 'write' }`; any key may call the others. */
  interface FastifyContextConfig { scope?: KeyScope }
}

// The scheme's name in any case (RFC 9110 section 11.1), then a key in its one form: tested
// without taking the key out by a capture, as the key is the header's last KEY_LENGTH characters.
const BEARER_WITH_KEY = new RegExp(`^(?i:bearer) +${API_KEY_PATTERN.source.slice(1)}`)
const BEARER_SCHEME = /^bearer(?: |$)/i
// last_used_at is for operators, not an audit log: a write per minute per key is plenty.
const TOUCH_INTERVAL_MS = 60_000

/**
 * RFC 6750 section 3.1: error="invalid_token" only when a bearer token was tried. A request
 * with no credentials, or with another scheme's, gets the bare challenge. Both answers are
 * made once and sent as they are, without the error handler: a 401 is the cheapest answer
 * the service gives, and keeps so.
 */
const UNAUTHORIZED_BODY = JSON.stringify(errorBody('unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.'))
const MISSING_KEY = 'Bearer realm="petstore"'
const INVALID_KEY = 'Bearer realm="petstore", error="invalid_token"'

const READ_ONLY = 'This API key is read-only: it may list and get animals but not add them; use a key with the write scope.'

export function isUsable (key: ApiKeyRecord, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now)
}

/**
 * The bearer check that guards every /v1 operation. It runs first (onRequest), so an
 * unauthenticated request never learns whether its body or parameters were right. The key
 * is found by its SHA-256 hash; the message never says whether a key exists. Over a budget,
 * the refusal (429) is thrown.
 */
export function bearerAuth (store: Store, now: () => number, keyCacheTtlMs: number, limits: AuthLimits): onRequestAsyncHookHandler {
  const lastTouched = new Map<number, number>()
  const keys = keyCache(store, keyCacheTtlMs)

  async function refuse (request: FastifyRequest, reply: FastifyReply, challenge: string): Promise<FastifyReply> {
    await limits.countFailure(request, reply)
    return reply.code(401).header('www-authenticate', challenge).type('application/json; charset=utf-8').send(UNAUTHORIZED_BODY)
  }

  function touch (request: FastifyRequest, keyId: number, at: number) {
    if (at - (lastTouched.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return
    lastTouched.set(keyId, at)
    store.touchApiKey(keyId, new Date(at).toISOString()).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record the key as used')
    })
  }

  return async function authenticate (request, reply) {
    if (limits.mayRefuseAddress()) await limits.refuseSpentAddress(request, reply)
    // HTTP strips surrounding whitespace from field values; inject does not, so trim alike.
    const header = request.headers.authorization?.trim()
    if (!header) return await refuse(request, reply, MISSING_KEY)
    if (!BEARER_WITH_KEY.test(header)) return await refuse(request, reply, BEARER_SCHEME.test(header) ? INVALID_KEY : MISSING_KEY)
    const at = now()
    const hash = hashApiKey(header.slice(-KEY_LENGTH))
    // Most requests find their key in memory and wait for nothing.
    const key = keys.cached(hash, at) ?? await keys.lookUp(hash, at)
    if (!key || !isUsable(key, at)) return await refuse(request, reply, INVALID_KEY)
    request.apiKeyId = key.id
    request.keyLineageId = key.lineageId
    if (limits.countsKeys) await limits.countKey(request, reply)
    touch(request, key.id, at)
    // Still before the body is read: a read key learns nothing about a body it may not send.
    if (key.scope === 'read' && request.routeOptions.config.scope === 'write') throw new ApiError('forbidden', READ_ONLY)
  }
}
