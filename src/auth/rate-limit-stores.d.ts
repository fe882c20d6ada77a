/*
 * @fastify/rate-limit's two counter stores, which its package does not type: the store API of
 * its custom stores (`incr`), and `read`, which both stores have since 11.2.
 */

declare module '@fastify/rate-limit/store/LocalStore.js' {
  /** A key's count in the current window, and the milliseconds until the window ends. */
  export interface Count { current: number, ttl: number }
  export type CountCallback = (error: Error | null, count: Count | null) => void
  export interface RateLimitStore {
    /** Counts one request against `key`; a window of `timeWindow` ms starts with the first. */
    incr(key: string, callback: CountCallback, timeWindow: number, max: number): void
    /** The count without adding to it (0 once the window has ended). */
    read(key: string, callback: CountCallback, timeWindow: number, max: number): void
  }
  /** Counts in this process, in an LRU map of at most `cache` keys. */
  const LocalStore: new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => RateLimitStore
  export default LocalStore
}

declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis'
  import type { RateLimitStore } from '@fastify/rate-limit/store/LocalStore.js'
  /** Counts in Redis under `key` + the counted key, shared by every instance. */
  const RedisStore: new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string) => RateLimitStore
  export default RedisStore
}
