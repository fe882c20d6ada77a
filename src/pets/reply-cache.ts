import type { FastifyContextConfig, FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import type { Store } from '../store/types.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Its replies may be kept and sent again (reply-cache.ts): a route says so only when they can never change. */
    cacheable?: boolean
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

/** ANSWER_CACHE_ENTRIES and ANSWER_CACHE_MAX_BYTES; either at 0 turns the caches off. */
export interface ReplyCacheLimits {
  /** Replies each cache keeps at most. */
  entries: number
  /** Bytes the two caches take together at most: each is given half. */
  maxBytes: number
}

/** What the cache needs: the store (does it assign ids in commit order?), its limits and counters. */
export interface ReplyCacheOptions { store: Store, limits: ReplyCacheLimits, counters: ReplyCacheCounters }

/** The cache as routes see it. */
export interface ReplyCache {
  /**
   * The replies one route keeps, counted under `cache`; undefined unless the route's config
   * marks it cacheable and the cache is on.
   */
  keep<K extends string | bigint, V extends {}> (config: FastifyContextConfig, cache: keyof ReplyCacheCounters, jsonOf: (value: V) => string): KeptReplies<K, V> | undefined
}

/**
 * What a kept reply costs, in bytes, at most: its JSON and its key as V8 stores them, plus
 * the entry's objects and the cache's bookkeeping for it. V8 keeps a string with any character
 * above U+00FF at two bytes per UTF-16 unit, one character is enough to make the whole string so,
 * and a name may hold any: `length * 2` never counts less than the string takes, and costs
 * nothing to compute, where Buffer.byteLength would scan the whole reply and count an ASCII
 * page with one emoji at half its size.
 */
export function replyBytes (json: string, key: string | bigint): number {
  return (json.length + (typeof key === 'string' ? key.length : 0)) * 2 + ENTRY_OVERHEAD_BYTES
}

// The string's and the entry's headers, a page's object and cursor, a bigint key, the cache's
// slots: generous, so that many small replies are not counted as free.
const ENTRY_OVERHEAD_BYTES = 256

/**
 * Replies that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite:
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
export const replyCache = fp(async function replyCache (app: FastifyInstance, { store, limits, counters }: ReplyCacheOptions) {
  const maxSize = Math.floor(limits.maxBytes / 2)
  const on = store.idsFollowCommitOrder && limits.entries > 0 && maxSize > 0
  app.decorate('replyCache', {
    keep<K extends string | bigint, V extends {}> (config: FastifyContextConfig, cache: keyof ReplyCacheCounters, jsonOf: (value: V) => string) {
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
}, { name: 'reply-cache' })

/** A kept reply is sent as it is, with this type: it is never serialized again. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/** The reply as the route's response schema writes it (fast-json-stringify: always a string). */
export const serialize = (reply: FastifyReply, payload: unknown) => reply.serialize(payload) as string
