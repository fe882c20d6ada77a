import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { errorBody } from '../http/errors.ts'
import { API_KEY_PATTERN, hashApiKey, KEY_LENGTH } from './keys.ts'
import type { ApiKeyRecord, Store } from '../store/types.ts'
import { KeyCache } from './key-cache.ts'
import type { AuthLimits } from './rate-limits.ts'

declare module 'fastify' {
  interface FastifyRequest { apiKeyId?: number }
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

export function isUsable (key: ApiKeyRecord, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now)
}

/**
 * The bearer check that guards every /v1 operation. It runs first (onRequest), so an
 * unauthenticated request never learns whether its body or parameters were right. The key
 * is found by its SHA-256 hash; the message never says whether a key exists.
 */
export function bearerAuth (store: Store, now: () => number, keyCacheTtlMs: number, limits?: AuthLimits): onRequestHookHandler {
  const lastTouched = new Map<number, number>()
  const keys = new KeyCache(store, keyCacheTtlMs)

  // Each step below is done at once when nothing has to wait (a cached key, counters in
  // memory) and returns a promise only when it must wait for the store or Redis: most
  // requests pass without a promise. A refusal is thrown (429) or sent (401).
  function reject (request: FastifyRequest, reply: FastifyReply, challenge: string): Promise<void> {
    // Settles once the 401 is written (a reply is thenable): the hook runner goes on when the
    // hook settles, and only a finished reply stops the handler from running.
    const send = async () => { await reply.code(401).header('www-authenticate', challenge).type('application/json; charset=utf-8').send(UNAUTHORIZED_BODY) }
    const counted = limits?.rejected(request, reply)
    return counted ? counted.then(send) : send()
  }

  function identify (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    // HTTP strips surrounding whitespace from field values; inject does not, so trim alike.
    const header = request.headers.authorization?.trim()
    if (!header) return reject(request, reply, MISSING_KEY)
    if (!BEARER_WITH_KEY.test(header)) return reject(request, reply, BEARER_SCHEME.test(header) ? INVALID_KEY : MISSING_KEY)
    const at = now()
    const found = keys.find(hashApiKey(header.slice(-KEY_LENGTH)), at)
    return found instanceof Promise ? found.then((key) => admitKey(request, reply, key, at)) : admitKey(request, reply, found, at)
  }

  function admitKey (request: FastifyRequest, reply: FastifyReply, key: ApiKeyRecord | undefined, at: number): Promise<void> | undefined {
    if (!key || !isUsable(key, at)) return reject(request, reply, INVALID_KEY)
    request.apiKeyId = key.id
    const counted = limits?.accepted(request, reply)
    if (counted) return counted.then(() => touch(request, key.id, at))
    touch(request, key.id, at)
    return undefined
  }

  function touch (request: FastifyRequest, keyId: number, at: number) {
    if (at - (lastTouched.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return
    lastTouched.set(keyId, at)
    store.touchApiKey(keyId, new Date(at).toISOString()).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record the key as used')
    })
  }

  // Fastify's hook runner takes either form: a returned promise continues the request when it
  // settles; otherwise done() does. A thrown refusal reaches the error handler in both.
  return function authenticate (request, reply, done) {
    const admitted = limits?.admit(request, reply)
    const verdict = admitted ? admitted.then(() => identify(request, reply)) : identify(request, reply)
    if (verdict) return verdict
    done()
  }
}
