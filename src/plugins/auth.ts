import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { errorBody } from '../errors.ts'
import { API_KEY_PATTERN, hashApiKey } from '../keys.ts'
import type { ApiKeyRecord, Store } from '../store/types.ts'
import { KeyCache } from './key-cache.ts'
import type { AuthLimits } from './rate-limits.ts'

declare module 'fastify' {
  interface FastifyRequest { apiKeyId?: number }
}

const BEARER = /^bearer +(\S+)$/i
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

export function isUsable (key: ApiKeyRecord, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now)
}

/**
 * The bearer check that guards every /v1 operation. It runs first (onRequest), so an
 * unauthenticated request never learns whether its body or parameters were right. The key
 * is found by its SHA-256 hash; the message never says whether a key exists.
 */
export function bearerAuth (store: Store, now: () => number, keyCacheTtlMs: number, limits?: AuthLimits): onRequestAsyncHookHandler {
  const lastTouched = new Map<number, number>()
  const keys = new KeyCache(store, keyCacheTtlMs)
  const reject = async (request: FastifyRequest, reply: FastifyReply, challenge: string) => {
    await limits?.rejected(request, reply)
    return reply.code(401).header('www-authenticate', challenge).type('application/json; charset=utf-8').send(UNAUTHORIZED_BODY)
  }
  return async function authenticate (request: FastifyRequest, reply: FastifyReply) {
    const admitted = limits?.admit(request, reply)
    if (admitted) await admitted
    // HTTP strips surrounding whitespace from field values; inject does not, so trim alike.
    const header = request.headers.authorization?.trim()
    if (!header) return await reject(request, reply, MISSING_KEY)
    const token = BEARER.exec(header)?.[1]
    if (token === undefined || !API_KEY_PATTERN.test(token)) return await reject(request, reply, BEARER_SCHEME.test(header) ? INVALID_KEY : MISSING_KEY)
    const at = now()
    const key = await keys.find(hashApiKey(token), at)
    if (!key || !isUsable(key, at)) return await reject(request, reply, INVALID_KEY)
    request.apiKeyId = key.id
    await limits?.accepted(request, reply)
    if (at - (lastTouched.get(key.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.id, at)
      store.touchApiKey(key.id, new Date(at).toISOString()).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not record the key as used')
      })
    }
  }
}
