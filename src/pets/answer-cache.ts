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

/**
 * Answers that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite: one writer at
 * a time), a new pet always gets a larger id than every pet already visible. So a full page
 * (one that has a next page) and a found pet are final; only the last page of a listing can
 * still grow, and it is never cached. At most `max` answers, the least recently used dropped
 * first; none where the store does not promise commit order, or when `max` is 0. Without a
 * cache no lookup is made, so nothing is counted: the store's own call count already says how
 * many reads went to it, and a ratio of 0 would read as a cache that never hits.
 */
export function finalAnswers<K extends {}, V extends {}> (store: Store, max: number, counters: LookupCounters): FinalAnswers<K, V> | undefined {
  if (!store.idsFollowCommitOrder || max === 0) return undefined
  const kept = new LRUCache<K, V>({ max })
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
