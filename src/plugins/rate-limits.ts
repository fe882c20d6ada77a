import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { ApiError } from '../errors.ts'

/**
 * Two budgets per minute, counted by @fastify/rate-limit in memory or, with Redis, across every
 * instance: "default" per API key, and "failed-auth" per client IP for requests that fail
 * authentication. The state goes out in the structured fields of
 * draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy and RateLimit.
 */

export interface RateLimitSettings {
  /** 0 turns the per-key budget off. */
  perKeyPerMinute: number
  failedAuthPerMinute: number
  redis?: Redis
  redisKeyPrefix: string
}

/** The calls the bearer check makes around its verdict. */
export interface AuthLimits {
  /** Before the key is looked up: 429 when this IP has used up its failed-auth budget. Synchronous when the counters are in memory. */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined
  /** After a failed check: counts it against the IP. */
  rejected(request: FastifyRequest, reply: FastifyReply): Promise<void>
  /** After a successful check: counts the request against the key; 429 over budget. */
  accepted(request: FastifyRequest, reply: FastifyReply): Promise<void>
}

const WINDOW_MS = 60_000
// Keys and addresses counted in memory at once; the least recently seen are dropped first.
const LOCAL_CACHE_ENTRIES = 10_000

type Limiter = ReturnType<FastifyInstance['createRateLimit']>
type LimiterState = Extract<Awaited<ReturnType<Limiter>>, { isAllowed: false }>

function policy (name: string, quota: number) {
  return { name, header: `"${name}";q=${quota};w=${WINDOW_MS / 1000}` }
}

const addressKey = (request: FastifyRequest) => `failed-auth:${normalizeIP(request.ip)}`

function tooMany (seconds: number, message: string): ApiError {
  return new ApiError('rate_limited', message, { headers: { 'retry-after': String(Math.max(1, seconds)) } })
}

export async function registerRateLimits (app: FastifyInstance, settings: RateLimitSettings): Promise<AuthLimits> {
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    cache: LOCAL_CACHE_ENTRIES,
    // One counter store, two budgets: a request counts against its key once authenticated,
    // against its address before that.
    keyGenerator: (request) => request.apiKeyId === undefined ? addressKey(request) : `key:${request.apiKeyId}`,
    max: (_request, key) => key.startsWith('key:') ? settings.perKeyPerMinute : settings.failedAuthPerMinute,
    ...(settings.redis ? { redis: settings.redis, nameSpace: `${settings.redisKeyPrefix}rate-limit:` } : {})
  })
  const limiter = app.createRateLimit()
  const perKey = policy('default', settings.perKeyPerMinute)
  const failedAuth = policy('failed-auth', settings.failedAuthPerMinute)

  /** A store that cannot answer (Redis down) lets the request through: an outage of the counter is not an outage of the API. */
  async function consult (request: FastifyRequest, check: () => ReturnType<Limiter>): Promise<LimiterState | undefined> {
    try {
      const state = await check()
      return state.isAllowed ? undefined : state
    } catch (error) {
      request.log.warn({ err: error }, 'rate limit store unavailable; request let through uncounted')
      return undefined
    }
  }

  function announce (reply: FastifyReply, name: string, policyHeader: string, state: LimiterState | undefined) {
    reply.header('ratelimit-policy', policyHeader)
    if (state) reply.header('ratelimit', `"${name}";r=${state.remaining};t=${state.ttlInSeconds}`)
  }

  function refuseAddress (reply: FastifyReply, state: Pick<LimiterState, 'remaining' | 'ttlInSeconds'>): never {
    announce(reply, failedAuth.name, failedAuth.header, state as LimiterState)
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
        return consult(request, () => limiter(request, { increment: false })).then((state) => {
          if (state && state.remaining === 0) refuseAddress(reply, state)
        })
      }
      if (blockedUntil.size === 0) return
      const address = addressKey(request)
      const until = blockedUntil.get(address)
      if (until === undefined) return
      const left = until - Date.now()
      if (left <= 0) blockedUntil.delete(address)
      else refuseAddress(reply, { remaining: 0, ttlInSeconds: Math.ceil(left / 1000) })
    },
    async rejected (request, reply) {
      const state = await consult(request, () => limiter(request))
      announce(reply, failedAuth.name, failedAuth.header, state)
      if (!settings.redis && state?.remaining === 0) {
        if (blockedUntil.size >= LOCAL_CACHE_ENTRIES) blockedUntil.clear()
        blockedUntil.set(addressKey(request), Date.now() + state.ttl)
      }
    },
    async accepted (request, reply) {
      if (settings.perKeyPerMinute === 0) return
      const state = await consult(request, () => limiter(request))
      announce(reply, perKey.name, perKey.header, state)
      if (state?.isExceeded) {
        throw tooMany(state.ttlInSeconds, `This API key has used its ${settings.perKeyPerMinute} requests of the current minute; retry after the time in Retry-After.`)
      }
    }
  }
}
