import { LRUCache } from 'lru-cache'
import type { ApiKeyRecord, Store } from '../store/types.ts'
import { hashApiKey } from './api-key.ts'

/** What a lookup found (undefined: no such key), and the time of the request that sent it. */
interface Found { record: ApiKeyRecord | undefined, sentAt: number }

/** Keys looked up, kept in memory so that most requests need no store round trip. */
export interface KeyCache {
  /** The record of the key a request sent, when memory holds it and it may still be trusted at `at`; never waits. */
  cached(key: string, at: number): ApiKeyRecord | undefined
  /** The record as the store has it, found by the key's hash (undefined: no such key); requests that wait for one key share a lookup. */
  lookUp(key: string, at: number): Promise<ApiKeyRecord | undefined>
}

// Enough for every key a deployment has; past it the least recently used is dropped.
export const KEY_CACHE_ENTRIES = 10_000

/**
 * Exact where the store can say that keys changed (SQLite's key version: a revocation from the
 * CLI is seen on the next request). Elsewhere an entry is trusted for less than ttlMs from when
 * the lookup that made it was sent, the documented bound on how long a revoked key keeps
 * working on another instance, and not at all once the clock reads earlier than that. (Hence
 * no lru-cache ttl: it counts from when the lookup's result came and trusts an entry from the future.)
 *
 * Under that bound a key in use is looked up again once its entry is past half its life, in
 * the background, while requests go on being served from the entry: under steady use no
 * request waits for the store. (When every request waited at expiry, two instances sharing
 * 2 cores with PostgreSQL stalled for hundreds of milliseconds once a second, waiting for a
 * backend that got no CPU.) Requests that wait share one lookup per key: lru-cache's fetch.
 * Keys the store does not know are not kept: guesses would push real keys out.
 *
 * Entries are found by the key as the request sent it, so a key in use is hashed (SHA-256) once
 * per lookup in the store, not once per request; the keys in use are then held in memory as
 * they came, as every request's headers are while it is served (docs/decisions.md).
 */
export function keyCache (store: Store, ttlMs: number): KeyCache {
  const versioned = store.keyVersion !== undefined
  const cache = new LRUCache<string, Found, number>({
    max: KEY_CACHE_ENTRIES,
    // The context is the time of the request that sends the lookup.
    fetchMethod: async (key, _stale, { context }) => ({ record: await store.findApiKeyByHash(hashApiKey(key)), sentAt: context }),
    // A failed refresh leaves the entry as it was, trusted up to its own bound.
    noDeleteOnFetchRejection: true,
    // A lookup whose entry goes meanwhile (emptied for a new key version, or pushed out) still
    // settles the requests waiting for it, and leaves nothing behind.
    ignoreFetchAbort: true
  })

  let version: number | undefined
  let versionReadAt = Number.NaN
  /** Read at most once per millisecond: a revocation is seen within 1 ms, at a fraction of the cost. */
  function followVersion (at: number) {
    if (at === versionReadAt) return
    versionReadAt = at
    const current = store.keyVersion?.()
    if (current === version) return
    version = current
    // Every entry, and every lookup out, may predate the change.
    cache.clear()
  }

  /** Whether what a lookup sent at `sentAt` found may be trusted at `at`: never when the clock went back. */
  const withinBound = (at: number, sentAt: number) => at >= sentAt && at - sentAt < ttlMs

  return {
    cached (key, at) {
      if (versioned) followVersion(at)
      const found = cache.get(key)
      if (found === undefined || versioned) return found?.record
      if (!withinBound(at, found.sentAt)) return undefined
      if (at - found.sentAt >= ttlMs / 2) {
        // Nothing waits for it: with allowStale it returns this entry, and when it fails
        // the entry stays as it was (noDeleteOnFetchRejection).
        cache.fetch(key, { forceRefresh: true, allowStale: true, context: at }).catch(() => {})
      }
      return found.record
    },

    async lookUp (key, at) {
      if (versioned) followVersion(at)
      else if (ttlMs === 0) return await store.findApiKeyByHash(hashApiKey(key))
      let found = await cache.forceFetch(key, { forceRefresh: true, context: at })
      // The lookup this request shared was sent too long before it (or, the clock having gone
      // back, after it): it asks again, and whatever is sent from now on is fresh enough for it.
      if (!versioned && !withinBound(at, found.sentAt)) found = await cache.forceFetch(key, { forceRefresh: true, context: at })
      if (found.record === undefined) cache.delete(key)
      return found.record
    }
  }
}
