import type { FastifyInstance, FastifyReply, FastifyRequest, onErrorHookHandler, onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify'
import { isConditional } from '../http/conditional-requests.ts'
import { fixedErrorJson } from '../http/error-body.ts'
import { ApiError } from '../http/errors.ts'
import type { KeyScope } from '../store/types.ts'
import { credentialsOf, isUsable, INVALID_KEY, keyAsSent } from './credentials.ts'
import { refuseDuplicateCredentials } from './duplicate-credentials.ts'
import type { AuthLimits } from './rate-limits.ts'

declare module 'fastify' {
  interface FastifyRequest {
    apiKeyId?: number
    /** The first key of the key's rotation chain: Idempotency-Keys are scoped to it. */
    keyLineageId?: number
    /** What the key may do: admitKey refuses a read key a write. */
    keyScope?: KeyScope
  }
  /** A route that changes data says so with `config: { scope: 'write' }`; any key may call the others. */
  interface FastifyContextConfig { scope?: KeyScope }
}

// last_used_at is for operators, not an audit log: a write per minute per key is plenty.
const TOUCH_INTERVAL_MS = 60_000

/**
 * Made once and sent as it is, without the error handler: a 401 is the cheapest reply the
 * service gives, and keeps so.
 */
const unauthorizedJson = fixedErrorJson('unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')

const READ_ONLY = 'This API key is read-only: it may list and get animals but not add them; use a key with the write scope.'

/**
 * The bearer check that guards every /v1 operation. It runs first (onRequest), so an
 * unauthenticated request never learns whether its body or parameters were right. The
 * message never says whether a key exists. A request with a usable key goes on to admitKey.
 */
export function bearerAuth ({ keys, store, now, limits }: FastifyInstance): onRequestAsyncHookHandler {
  const lastTouched = new Map<number, number>()

  async function refuse (request: FastifyRequest, reply: FastifyReply, challenge: string): Promise<FastifyReply> {
    await limits.countFailure(request, reply)
    return reply.code(401).header('www-authenticate', challenge).type('application/json; charset=utf-8').send(unauthorizedJson(request.id))
  }

  function touch (request: FastifyRequest, keyId: number, at: number) {
    if (at - (lastTouched.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return
    lastTouched.set(keyId, at)
    store.touchApiKey(keyId, new Date(at).toISOString()).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record the key as used')
    })
  }

  return async function authenticate (request, reply) {
    refuseDuplicateCredentials(request)
    if (limits.mayRefuseAddress()) await limits.refuseSpentAddress(request, reply)
    const at = now()
    // Most requests find their key in memory, sent as every client sends it, and wait for nothing.
    const sent = keyAsSent(request)
    let record = sent === undefined ? undefined : keys.cached(sent, at)
    if (record === undefined) {
      const { key, challenge } = credentialsOf(request)
      if (key === undefined) return await refuse(request, reply, challenge)
      record = keys.cached(key, at) ?? await keys.lookUp(key, at)
    }
    if (!record || !isUsable(record, at)) return await refuse(request, reply, INVALID_KEY)
    request.apiKeyId = record.id
    request.keyLineageId = record.lineageId
    request.keyScope = record.scope
    touch(request, record.id, at)
  }
}

/**
 * The hook after the key is known (bearerAuth, or the public routes' rate limit): the request
 * counts against its key (429 over the limit; a conditional read only once it is not a 304), then a read key is refused a write (403),
 * still before the body is read, so a read key learns nothing about a body it may not send.
 * Callback form, as the rate limit's stores reply: the counters in memory at once, with no
 * promise on the path every request with a key takes.
 */
export function admitKey (limits: AuthLimits): onRequestHookHandler {
  return function admitKey (request, reply, done) {
    if (request.apiKeyId === undefined || !limits.countsKeys) return done(refusedScope(request))
    const admit = (error?: ApiError) => { done(error ?? refusedScope(request)) }
    // A 304 is free: a conditional request is counted once its reply is known not to be one
    // (http/conditional-requests.ts), and only refused here when the key has nothing left.
    if (isConditional(request)) limits.peekKey(request, reply, admit)
    else limits.countKey(request, reply, admit)
  }
}

/**
 * A conditional request admitted without being counted (admitKey) that ends in an error is
 * counted as the error is replied to: only a 304 is free. An onError hook, so that the replies
 * that are no error pay nothing for it. Callback form, as admitKey.
 */
export function countErrorsOfConditionalRequests (limits: AuthLimits): onErrorHookHandler {
  return function countErrorsOfConditionalRequests (request, reply, _error, done) {
    limits.countDeferredError(request, reply, done)
  }
}

function refusedScope (request: FastifyRequest): ApiError | undefined {
  return request.keyScope === 'read' && request.routeOptions.config.scope === 'write' ? new ApiError('forbidden', READ_ONLY) : undefined
}
