import type { FastifyReply } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Store } from '../store/types.ts'

/** The hit and miss counters of one cache (src/ops/metrics.ts counts them for /metrics). */
export interface LookupCounters { hit: { inc (): void }, miss: { inc (): void } }

/** The caches the pet operations keep: found pets (getPet) and full pages (listPets). */
export type AnswerCacheCounters = Record<'pet' | 'list', LookupCounters>

/** A cache of final answers that counts each lookup as a hit or a miss. */
export interface FinalAnswers<K, V> {
  get (key: K): V | undefined
  set (key: K, value: V): void
}

/** ANSWER_CACHE_ENTRIES and ANSWER_CACHE_MAX_BYTES; either at 0 turns the caches off. */
export interface AnswerCacheLimits {
  /** Answers each cache keeps at most. */
  entries: number
  /** Bytes the two caches take together at most: each is given half. */
  maxBytes: number
}

/**
 * What a kept answer costs, in bytes, at most: its JSON and its key as V8 stores them, plus
 * the entry's objects and the cache's bookkeeping for it. V8 keeps a string with any character
 * above U+00FF at two bytes per UTF-16 unit, one character is enough to make the whole string so,
 * and a name may hold any: `length * 2` never counts less than the string takes, and costs
 * nothing to compute, where Buffer.byteLength would scan the whole answer and count an ASCII
 * page with one emoji at half its size.
 */
export function answerBytes (json: string, key: string | bigint): number {
  return (json.length + (typeof key === 'string' ? key.length : 0)) * 2 + ENTRY_OVERHEAD_BYTES
}

// The string's and the entry's headers, a page's object and cursor, a bigint key, the cache's
// slots: generous, so that many small answers are not counted as free.
const ENTRY_OVERHEAD_BYTES = 256

/**
 * Answers that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite: one writer at
 * a time), a new pet always gets a larger id than every pet already visible. So a full page
 * (one that has a next page) and a found pet are final; only the last page of a listing can
 * still grow, and it is never cached. At most `limits.entries` answers, and at most half of
 * `limits.maxBytes` (answerBytes): a count alone would let long names fill the memory, as
 * full pages of them can be listed from any cursor. The least recently used are dropped first;
 * an answer larger than the whole bound is not kept. None where the store does not promise
 * commit order, or when a limit is 0. Without a cache no lookup is made, so nothing is
 * counted: the store's own call count already says how many reads went to it, and a ratio of 0
 * would read as a cache that never hits.
 */
export function finalAnswers<K extends string | bigint, V extends {}> (store: Store, limits: AnswerCacheLimits, jsonOf: (value: V) => string, counters: LookupCounters): FinalAnswers<K, V> | undefined {
  const maxSize = Math.floor(limits.maxBytes / 2)
  if (!store.idsFollowCommitOrder || limits.entries === 0 || maxSize === 0) return undefined
  const kept = new LRUCache<K, V>({ max: limits.entries, maxSize, sizeCalculation: (value, key) => answerBytes(jsonOf(value), key) })
  return {
    get (key) {
      const value = kept.get(key)
      if (value === undefined) counters.miss.inc()
      else counters.hit.inc()
      return value
    },
    set (key, value) { kept.set(key, value) }
  }
}

/** A cached answer is sent as it is, with this type: it is never serialized again. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/** The answer as the route's response schema writes it (fast-json-stringify: always a string). */
export const serialize = (reply: FastifyReply, payload: unknown) => reply.serialize(payload) as string
