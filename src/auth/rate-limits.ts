import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { ApiError } from '../http/errors.ts'
import { WindowCounters, type BudgetState } from './window-counters.ts'

/**
 * Two budgets per minute: "default" per API key, and "failed-auth" per client IP for requests
 * that fail authentication. Without Redis each instance counts in memory (WindowCounters, the
 * rule of @fastify/rate-limit's in-memory store, without its promise per request); with Redis,
 * @fastify/rate-limit counts across every instance. The state goes out in the structured fields
 * of draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy and RateLimit.
 */

export interface RateLimitSettings {
  /** 0 turns the per-key budget off. */
  perKeyPerMinute: number
  failedAuthPerMinute: number
  redis?: Redis
  redisKeyPrefix: string
}

/**
 * The calls the bearer check makes around its verdict. Each returns undefined when it is done
 * (counters in memory) and a promise when it waits for Redis; a refusal is thrown (429).
 */
export interface AuthLimits {
  /** Before the key is looked up: 429 when this IP has used up its failed-auth budget. */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined
  /** After a failed check: counts it against the IP. */
  rejected(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined
  /** After a successful check: counts the request against the key; 429 over budget. */
  accepted(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined
}

const WINDOW_MS = 60_000
// Keys and addresses counted in memory at once; the least recently seen are dropped first.
const LOCAL_CACHE_ENTRIES = 10_000

/** A budget's state, or undefined when it is not counted (the counter store is down). */
type Counted = BudgetState | undefined
type Count = (request: FastifyRequest, options?: { increment: false }) => Counted | Promise<Counted>

function policy (name: string, quota: number) {
  return { name, header: `"${name}";q=${quota};w=${WINDOW_MS / 1000}` }
}

// An address without a colon is IPv4, which normalizeIP returns as it is, after testing it
// against its long IPv6 pattern: that test was most of this key's cost on every 401.
const addressOf = (request: FastifyRequest) => request.ip.includes(':') ? normalizeIP(request.ip) : request.ip
const addressKey = (request: FastifyRequest) => `failed-auth:${addressOf(request)}`
// In Redis, one counter store for two budgets: a request counts against its key once
// authenticated, against its address before that (in memory, see localCounters).
const budgetKey = (request: FastifyRequest) => request.apiKeyId === undefined ? addressKey(request) : `key:${request.apiKeyId}`

function tooMany (seconds: number, message: string): ApiError {
  return new ApiError('rate_limited', message, { headers: { 'retry-after': String(Math.max(1, seconds)) } })
}

/** Runs `then` on the value now, or once the promise holds it. */
function whenCounted (counted: Counted | Promise<Counted>, then: (state: Counted) => void): Promise<void> | undefined {
  if (counted instanceof Promise) return counted.then(then)
  then(counted)
  return undefined
}

export async function registerRateLimits (app: FastifyInstance, settings: RateLimitSettings): Promise<AuthLimits> {
  const maxOf = (key: string) => key.startsWith('key:') ? settings.perKeyPerMinute : settings.failedAuthPerMinute
  const count = settings.redis ? await sharedCounters(app, settings.redis, settings.redisKeyPrefix, maxOf) : localCounters(settings)
  const perKey = policy('default', settings.perKeyPerMinute)
  const failedAuth = policy('failed-auth', settings.failedAuthPerMinute)

  function announce (reply: FastifyReply, name: string, policyHeader: string, state: Counted) {
    reply.header('ratelimit-policy', policyHeader)
    if (state) reply.header('ratelimit', `"${name}";r=${state.remaining};t=${state.ttlInSeconds}`)
  }

  function refuseAddress (reply: FastifyReply, state: Pick<BudgetState, 'remaining' | 'ttlInSeconds'>): never {
    announce(reply, failedAuth.name, failedAuth.header, state as BudgetState)
    throw tooMany(state.ttlInSeconds, 'Too many requests from this address failed authentication; retry after the time in Retry-After.')
  }

  // With the counters in this process, only rejected() below can use up an address's budget,
  // so it notes when a budget runs out, and the gate that every request passes is a map lookup
  // instead of a read of the counter store. With Redis, other instances count too: the gate
  // asks the store.
  const blockedUntil = new Map<string, number>()

  return {
    admit (request, reply) {
      if (settings.redis) {
        return whenCounted(count(request, { increment: false }), (state) => {
          if (state && state.remaining === 0) refuseAddress(reply, state)
        })
      }
      if (blockedUntil.size === 0) return
      const address = addressOf(request)
      const until = blockedUntil.get(address)
      if (until === undefined) return
      const left = until - Date.now()
      if (left <= 0) blockedUntil.delete(address)
      else refuseAddress(reply, { remaining: 0, ttlInSeconds: Math.ceil(left / 1000) })
    },
    rejected (request, reply) {
      return whenCounted(count(request), (state) => {
        announce(reply, failedAuth.name, failedAuth.header, state)
        if (!settings.redis && state?.remaining === 0) {
          if (blockedUntil.size >= LOCAL_CACHE_ENTRIES) blockedUntil.clear()
          blockedUntil.set(addressOf(request), Date.now() + state.ttl)
        }
      })
    },
    accepted (request, reply) {
      if (settings.perKeyPerMinute === 0) return
      return whenCounted(count(request), (state) => {
        announce(reply, perKey.name, perKey.header, state)
        if (state?.isExceeded) {
          throw tooMany(state.ttlInSeconds, `This API key has used its ${settings.perKeyPerMinute} requests of the current minute; retry after the time in Retry-After.`)
        }
      })
    }
  }
}

/**
 * Keys and addresses in counters of their own, so that no budget's name is joined to the key's
 * id or the address ("key:7") and hashed anew on every request. A key's id is named by
 * String(id), which V8 answers from its cache of number strings, hash included: a map of names
 * made once measured no faster (24 ns a count either way). (String keys only: the answer cache
 * shares SecondChanceMap, whose code V8 compiles for the one key type it sees.)
 */
function localCounters (settings: RateLimitSettings): Count {
  const keys = new WindowCounters(WINDOW_MS, LOCAL_CACHE_ENTRIES)
  const addresses = new WindowCounters(WINDOW_MS, LOCAL_CACHE_ENTRIES)
  return (request) => request.apiKeyId === undefined
    ? addresses.count(addressOf(request), settings.failedAuthPerMinute, Date.now())
    : keys.count(String(request.apiKeyId), settings.perKeyPerMinute, Date.now())
}

/** A store that cannot answer (Redis down) lets the request through: an outage of the counter is not an outage of the API. */
async function sharedCounters (app: FastifyInstance, redis: Redis, prefix: string, maxOf: (key: string) => number): Promise<Count> {
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    keyGenerator: budgetKey,
    max: (_request, key) => maxOf(key),
    redis,
    nameSpace: `${prefix}rate-limit:`
  })
  const limiter = app.createRateLimit()
  return (request, options) => limiter(request, options).then(
    (state) => state.isAllowed ? undefined : state,
    (error: unknown) => {
      request.log.warn({ err: error }, 'rate limit store unavailable; request let through uncounted')
      return undefined
    }
  )
}
