import LocalStore, { type Count, type RateLimitStore } from '@fastify/rate-limit/store/LocalStore.js'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { addressKey } from '../http/client-address.ts'
import { ApiError } from '../http/errors.ts'
import type { RedisBreaker } from './redis-breaker.ts'

/**
 * Two rate limits per minute: "default" per API key, and "failed-auth" per client address for
 * requests without a usable key: pet operations that fail authentication, and the public
 * routes (the docs page, the OpenAPI document, unknown paths) called without a key. Each
 * counts in a store of @fastify/rate-limit: without Redis in this process (its LocalStore),
 * with Redis across every instance (its RedisStore, behind a circuit breaker).
 * The state goes out in the structured fields of draft-ietf-httpapi-ratelimit-headers:
 * RateLimit-Policy and RateLimit.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** Admitted by peekKey: the key's count waits until the reply is known not to be a 304. */
    keyCountDeferred?: boolean
  }
}

export interface RateLimitSettings {
  /** 0 turns the per-key limit off. */
  perKeyPerMinute: number
  failedAuthPerMinute: number
  redis?: RedisBreaker
  redisKeyPrefix: string
}

/** The counts made around the bearer check and the public routes' limit; a refusal is a 429. */
export interface AuthLimits {
  /** False while no address can be over its failed-auth limit: refuseSpentAddress would read the store for nothing. */
  mayRefuseAddress(): boolean
  /** Before the key is looked up: 429 when this address has used up its failed-auth limit. */
  refuseSpentAddress(request: FastifyRequest, reply: FastifyReply): Promise<void>
  /** After a failed check: counts it against the address (undefined: uncounted). */
  countFailure(request: FastifyRequest, reply: FastifyReply): Promise<Count | undefined>
  /** A request to the public routes without a usable key: counts against the address; 429 over the limit. */
  countAnonymous(request: FastifyRequest, reply: FastifyReply): Promise<void>
  /** False when RATE_LIMIT_PER_MINUTE is 0: keys are not counted, and replies carry no fields. */
  countsKeys: boolean
  /**
   * After a successful check: counts the request against its key, then calls `done` (with the
   * 429 over the limit). Callback form, as the stores reply: in memory at once, without a promise.
   */
  countKey(request: FastifyRequest, reply: FastifyReply, done: (error?: ApiError) => void): void
  /**
   * Instead of countKey, for a conditional request (If-None-Match): reads the key's count
   * without adding to it, and calls `done` with the 429 when the key has no request left (a
   * refusal is never turned into a 304). The reply's fields say what is left. The request is
   * then counted by countDeferred or countDeferredError, unless its reply is a 304.
   */
  peekKey(request: FastifyRequest, reply: FastifyReply, done: (error?: ApiError) => void): void
  /** A peeked request that will be a 200: counted now, and refused (429) over the limit. Undefined when nothing was deferred. */
  countDeferred(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined
  /**
   * A peeked request that ends in an error: counted as its Error reply is made, the fields
   * updated. Not refused, as it is already refused; the next request is refused as usual.
   */
  countDeferredError(request: FastifyRequest, reply: FastifyReply, done: () => void): void
}

interface Limit {
  name: string
  quota: number
  /** The RateLimit-Policy field. */
  policy: string
  store: RateLimitStore
  breaker?: RedisBreaker
}

const WINDOW_MS = 60_000
// Keys, and addresses, counted in memory at once; the least recently counted are dropped first.
export const LOCAL_CACHE_ENTRIES = 10_000

/**
 * A limit's store: in Redis under REDIS_KEY_PREFIX + "rate-limit:" + `kind` + ":", or in memory.
 * The only place that takes them by path (the package has no exports map, and
 * rate-limit-stores.d.ts types them): test/auth/rate-limit-stores.test.ts and its Redis twin hold
 * what is relied on here, so that an upgrade that changes it fails there.
 */
export function limitStore (kind: string, { redis, redisKeyPrefix }: { redis?: Redis, redisKeyPrefix: string }): RateLimitStore {
  // Fixed windows: neither of the stores' options that extend a window past the limit.
  return redis
    ? new RedisStore(false, false, redis, `${redisKeyPrefix}rate-limit:${kind}:`)
    : new LocalStore(false, false, LOCAL_CACHE_ENTRIES)
}

function defineLimit (name: string, kind: string, quota: number, settings: RateLimitSettings): Limit {
  const store = limitStore(kind, { redis: settings.redis?.client, redisKeyPrefix: settings.redisKeyPrefix })
  return { name, quota, policy: `"${name}";q=${quota};w=${WINDOW_MS / 1000}`, store, breaker: settings.redis }
}

const addressOf = (request: FastifyRequest) => addressKey(request.ip)

const ADDRESS_SPENT = 'Too many requests without a valid API key came from this address; retry after the time in Retry-After.'

/**
 * Counts one request against `key` (`read`: only reads the count) and hands the count to
 * `then`: undefined when the store cannot respond, or while the breaker keeps the counters off
 * Redis, as an outage of the counter is not an outage of the API. The breaker logs the outage,
 * once.
 */
function count ({ store, quota, breaker }: Limit, method: 'incr' | 'read', key: string, then: (count: Count | undefined) => void): void {
  if (breaker && !breaker.isClosed()) return then(undefined)
  store[method](key, (error, counted) => {
    if (error) breaker?.failed(error)
    then(counted ?? undefined)
  }, WINDOW_MS, quota)
}

/** count() as a promise, for the callers that wait anyway. */
const tally = (limit: Limit, method: 'incr' | 'read', key: string) =>
  new Promise<Count | undefined>((resolve) => { count(limit, method, key, resolve) })

function announce (reply: FastifyReply, { name, quota, policy }: Limit, count: Count | undefined) {
  reply.header('ratelimit-policy', policy)
  if (count) reply.header('ratelimit', `"${name}";r=${Math.max(0, quota - count.current)};t=${Math.ceil(count.ttl / 1000)}`)
}

function tooMany (count: Count, message: string): ApiError {
  return new ApiError('rate_limited', message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(count.ttl / 1000))) } })
}

export function rateLimits (settings: RateLimitSettings): AuthLimits {
  const perKey = defineLimit('default', 'key', settings.perKeyPerMinute, settings)
  const failedAuth = defineLimit('failed-auth', 'failed-auth', settings.failedAuthPerMinute, settings)
  // In memory only this process counts failures, so no address can be refused before
  // countFailure sees a limit run out, nor after that window ends: the rest of the time the
  // gate every request passes reads neither the store nor the clock. With Redis, other
  // instances count too.
  let spentUntil = settings.redis ? Infinity : 0

  async function countAgainstAddress (request: FastifyRequest, reply: FastifyReply): Promise<Count | undefined> {
    const count = await tally(failedAuth, 'incr', addressOf(request))
    announce(reply, failedAuth, count)
    if (count && count.current >= failedAuth.quota) spentUntil = Math.max(spentUntil, Date.now() + count.ttl)
    return count
  }

  return {
    mayRefuseAddress () {
      if (spentUntil !== 0 && spentUntil <= Date.now()) spentUntil = 0
      return spentUntil !== 0
    },
    async refuseSpentAddress (request, reply) {
      const count = await tally(failedAuth, 'read', addressOf(request))
      if (count && count.current >= failedAuth.quota) {
        announce(reply, failedAuth, count)
        throw tooMany(count, ADDRESS_SPENT)
      }
    },
    countFailure: countAgainstAddress,
    async countAnonymous (request, reply) {
      const count = await countAgainstAddress(request, reply)
      if (count && count.current > failedAuth.quota) throw tooMany(count, ADDRESS_SPENT)
    },
    countsKeys: settings.perKeyPerMinute > 0,
    countKey,
    peekKey (request, reply, done) {
      count(perKey, 'read', String(request.apiKeyId), (counted) => {
        // No window yet (the stores say ttl 0): the next counted request starts a whole one.
        announce(reply, perKey, counted?.ttl === 0 ? { current: 0, ttl: WINDOW_MS } : counted)
        if (counted && counted.current >= perKey.quota) return done(keySpent(counted))
        request.keyCountDeferred = true
        done()
      })
    },
    countDeferred (request, reply) {
      if (request.keyCountDeferred !== true) return undefined
      request.keyCountDeferred = false
      return new Promise((resolve, reject) => {
        countKey(request, reply, (error) => error ? reject(error) : resolve())
      })
    },
    countDeferredError (request, reply, done) {
      if (request.keyCountDeferred !== true) return done()
      request.keyCountDeferred = false
      count(perKey, 'incr', String(request.apiKeyId), (counted) => {
        announce(reply, perKey, counted)
        done()
      })
    }
  }

  function countKey (request: FastifyRequest, reply: FastifyReply, done: (error?: ApiError) => void) {
    count(perKey, 'incr', String(request.apiKeyId), (counted) => {
      announce(reply, perKey, counted)
      done(counted && counted.current > perKey.quota ? keySpent(counted) : undefined)
    })
  }

  function keySpent (counted: Count): ApiError {
    return tooMany(counted, `This API key has used its ${perKey.quota} requests of the current minute; retry after the time in Retry-After.`)
  }
}
