import { SecondChanceMap } from '../http/second-chance.ts'

/** A budget's state after one request: what @fastify/rate-limit's limiter reports, too. */
export interface BudgetState {
  remaining: number
  /** Milliseconds until the window ends. */
  ttl: number
  ttlInSeconds: number
  isExceeded: boolean
}

interface Window { count: number, startedAt: number }

/**
 * Request counts in fixed windows, kept in this process: the rule of @fastify/rate-limit's
 * in-memory store (a key's window starts with its first request; when it ends, the count
 * starts over). Synchronous, because the per-key count runs on every request and a promise
 * chain costs more than the count. Bounded: past `capacity` keys, one that was not counted
 * lately is dropped (SecondChanceMap).
 */
export class WindowCounters {
  readonly #windows: SecondChanceMap<string, Window>
  readonly #windowMs: number

  constructor (windowMs: number, capacity: number) {
    this.#windowMs = windowMs
    this.#windows = new SecondChanceMap(capacity)
  }

  /** Counts one request against `key`'s budget of `max` and says what is left. */
  count (key: string, max: number, now: number): BudgetState {
    let window = this.#windows.get(key)
    if (window === undefined) {
      window = { count: 0, startedAt: now }
      this.#windows.set(key, window)
    } else if (window.startedAt + this.#windowMs <= now) {
      window.count = 0
      window.startedAt = now
    }
    window.count++
    const ttl = window.startedAt + this.#windowMs - now
    return { remaining: Math.max(0, max - window.count), ttl, ttlInSeconds: Math.ceil(ttl / 1000), isExceeded: window.count > max }
  }
}
