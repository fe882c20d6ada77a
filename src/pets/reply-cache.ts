import type { FastifyContextConfig, FastifyInstance, FastifyReply, HTTPMethods } from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Its replies may be kept and sent again (reply-cache.ts): a route says so only when they can never change. */
    cacheable?: boolean
    /** It changes or removes a pet that exists: the app refuses it while the reply cache is on. */
    changesPets?: boolean
  }
  interface FastifyInstance {
    /** Hands each cacheable route its share of the cache (the reply-cache plugin). */
    replyCache: ReplyCache
  }
}

/** The hit and miss counters of one cache (src/ops/metrics.ts counts them for /metrics). */
export interface LookupCounters { hit: { inc (): void }, miss: { inc (): void } }

/** The caches the pet operations keep: found pets (getPet) and full pages (listPets). */
export type ReplyCacheCounters = Record<'pet' | 'list', LookupCounters>

/** Replies kept serialized, each lookup counted as a hit or a miss. */
export interface KeptReplies<K, V> {
  get (key: K): V | undefined
  set (key: K, value: V): void
}

/** The cache as routes see it. */
export interface ReplyCache {
  /**
   * The replies one route keeps, counted under `cache`; undefined unless the route's config
   * marks it cacheable and the cache is on.
   */
  keep<K extends string | number, V extends {}> (config: FastifyContextConfig, cache: keyof ReplyCacheCounters, jsonOf: (value: V) => string): KeptReplies<K, V> | undefined
}

/**
 * What a kept reply costs, in bytes, at most: its JSON and its key as V8 stores them, plus
 * the entry's objects and the cache's bookkeeping for it. V8 keeps a string with any character
 * above U+00FF at two bytes per UTF-16 unit, one character is enough to make the whole string so,
 * and a name may hold any: `length * 2` never counts less than the string takes, and costs
 * nothing to compute, where Buffer.byteLength would scan the whole reply and count an ASCII
 * page with one emoji at half its size.
 */
export function replyBytes (json: string, key: string | number): number {
  return (json.length + (typeof key === 'string' ? key.length : 0)) * 2 + ENTRY_OVERHEAD_BYTES
}

// The string's and the entry's headers, a page's object and cursor, a number key, the cache's
// slots: generous, so that many small replies are not counted as free.
const ENTRY_OVERHEAD_BYTES = 256

/**
 * Replies that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one: enforced below) and, in a store whose ids are assigned in commit order (SQLite:
 * one writer at a time), a new pet always gets a larger id than every pet already visible. So a
 * full page (one that has a next page) and a found pet are final; only the last page of a
 * listing can still grow, and it is never kept. Only routes marked `config.cacheable` get a
 * share. At most `limits.entries` replies, and at most half of `limits.maxBytes` (replyBytes):
 * a count alone would let long names fill the memory, as full pages of them can be listed from
 * any cursor. The least recently used are dropped first; a reply larger than the whole bound is
 * not kept. None where the store does not promise commit order, or when a limit is 0. Without
 * a cache no lookup is made, so nothing is counted: the store's own call count already says
 * how many reads went to it, and a ratio of 0 would read as a cache that never hits.
 */
export const replyCache = fp(async function replyCache (app: FastifyInstance) {
  const { store, config, metrics: { replyCache: counters } } = app
  // Replies each cache keeps at most, and bytes the two take together at most (each gets
  // half); either at 0 turns the caches off.
  const limits = { entries: config.REPLY_CACHE_ENTRIES, maxBytes: config.REPLY_CACHE_MAX_BYTES }
  const maxSize = Math.floor(limits.maxBytes / 2)
  const on = store.idsFollowCommitOrder && limits.entries > 0 && maxSize > 0
  app.decorate('replyCache', {
    keep<K extends string | number, V extends {}> (config: FastifyContextConfig, cache: keyof ReplyCacheCounters, jsonOf: (value: V) => string) {
      if (!on || config.cacheable !== true) return undefined
      const kept = new LRUCache<K, V>({ max: limits.entries, maxSize, sizeCalculation: (value, key) => replyBytes(jsonOf(value), key) })
      const { hit, miss } = counters[cache]
      return {
        get (key: K) {
          const value = kept.get(key)
          if (value === undefined) miss.inc()
          else hit.inc()
          return value
        },
        set (key: K, value: V) { kept.set(key, value) }
      }
    }
  })
  if (on) refuseRoutesThatChangePets(app)
}, { name: 'reply-cache', decorators: { fastify: ['store', 'config', 'metrics'] } })

/** A route as onRoute sees it. */
interface SeenRoute { url: string, method: HTTPMethods | HTTPMethods[], config?: FastifyContextConfig }

const CHANGING_METHODS = new Set<string>(['PUT', 'PATCH', 'DELETE'])

/**
 * The rule the cache stands on, enforced: while it is on, the app refuses any route that
 * changes a pet, as it is registered, naming it. A kept reply would otherwise be sent stale, on
 * every instance, with nothing to tell. A route changes pets when its config says so, or when it
 * puts, patches or deletes at or below a cacheable route's path. Each route is checked against
 * the cacheable routes before it, and each cacheable route against every route before it, so
 * the order they come in does not matter. Creating a pet changes none: see above.
 */
function refuseRoutesThatChangePets (app: FastifyInstance) {
  const cacheable = new Set<string>()
  const seen: SeenRoute[] = []
  function check (route: SeenRoute) {
    const changing = [route.method].flat().filter((method) => CHANGING_METHODS.has(method))
    const underCached = [...cacheable].some((url) => route.url === url || route.url.startsWith(`${url}/`))
    if (cacheable.size === 0 || !(route.config?.changesPets || (changing.length > 0 && underCached))) return
    throw new Error(`${[route.method].flat().join(', ')} ${route.url} changes pets while the reply cache keeps replies of ${[...cacheable].join(' and ')} as final (src/pets/reply-cache.ts), so instances would go on sending the pet as it was; make the cache forget a pet that changes, or start with REPLY_CACHE_ENTRIES=0`)
  }
  app.addHook('onRoute', (route) => {
    if (route.config?.refusesOnly) return
    if (route.config?.cacheable) {
      cacheable.add(route.url)
      seen.forEach(check)
    }
    check(route)
    seen.push(route)
  })
}

/** The reply as the route's response schema writes it (fast-json-stringify: always a string). */
export const serialize = (reply: FastifyReply, payload: unknown) => reply.serialize(payload) as string
