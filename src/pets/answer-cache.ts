import type { FastifyReply } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Store } from '../store/types.ts'

/**
 * Answers that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite: one writer at
 * a time), a new pet always gets a larger id than every pet already visible. So a full page
 * (one that has a next page) and a found pet are final; only the last page of a listing can
 * still grow, and it is never cached. At most `max` answers, the least recently used dropped
 * first; none where the store does not promise commit order, or when `max` is 0.
 */
export function finalAnswers<K extends {}, V extends {}> (store: Store, max: number): LRUCache<K, V> | undefined {
  return store.idsFollowCommitOrder && max > 0 ? new LRUCache<K, V>({ max }) : undefined
}

/** A cached answer is sent as it is, with this type: it is never serialized again. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/** The answer as the route's response schema writes it (fast-json-stringify: always a string). */
export const serialize = (reply: FastifyReply, payload: unknown) => reply.serialize(payload) as string
