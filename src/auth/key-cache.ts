import type { ApiKeyRecord, Store } from '../store/types.ts'

interface Entry { key: ApiKeyRecord, at: number, version: number | undefined }
/** A lookup in flight: what it will find is as fresh as `at` (when it was sent), under `version`. */
interface Lookup { found: Promise<ApiKeyRecord | undefined>, at: number, version: number | undefined }

// Enough for every key a deployment has; past it the cache starts over rather than grow.
const MAX_ENTRIES = 10_000

/**
 * Keeps looked-up keys in memory so the hot path needs no store round trip. Exact where the
 * store can say that keys changed (SQLite's key change counter: a revocation from the CLI is seen on
 * the next request); elsewhere an entry is trusted for at most ttlMs, the documented bound on
 * how long a revoked key keeps working on another instance.
 *
 * With a time bound, a key in use is looked up again once its entry is past half its life,
 * in the background, while requests go on being answered from the entry: under steady use no
 * request waits for the store. (When every request waited at expiry, two instances sharing
 * 2 cores with PostgreSQL stalled for hundreds of milliseconds once a second, waiting for a
 * backend that got no CPU.) Requests that must wait share one lookup per key, not one each.
 * The bound holds: an entry's age counts from when the lookup that made it was sent.
 */
export class KeyCache {
  readonly #entries = new Map<string, Entry>()
  readonly #lookups = new Map<string, Lookup>()
  readonly #store: Store
  readonly #ttlMs: number
  #version: number | undefined
  #versionReadAt = Number.NaN

  constructor (store: Store, ttlMs: number) {
    this.#store = store
    this.#ttlMs = ttlMs
  }

  /** The key on a hit, at once; a promise of it when the store has to be asked. */
  find (hash: string, now: number): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined> {
    const version = this.#currentVersion(now)
    const entry = this.#entries.get(hash)
    if (entry) {
      if (version !== undefined) {
        if (entry.version === version) return entry.key
      } else if (this.#withinBound(now, entry.at)) {
        // A failed refresh changes nothing: the entry runs out, and the next request asks.
        if (now - entry.at >= this.#ttlMs / 2) this.#lookUp(hash, now, version).catch(() => {})
        return entry.key
      }
    }
    return this.#lookUp(hash, now, version)
  }

  /** One lookup per key at a time, shared while what it finds is within the bound for `now`. */
  #lookUp (hash: string, now: number, version: number | undefined): Promise<ApiKeyRecord | undefined> {
    const inFlight = this.#lookups.get(hash)
    if (inFlight && inFlight.version === version && (version !== undefined || this.#withinBound(now, inFlight.at))) return inFlight.found
    const found = this.#store.findApiKeyByHash(hash).then((key) => {
      // A lookup sent later has already left an entry: it is the newer one, and stays. (If that
      // lookup found no key, this one may put its record back: trusted only within its own bound.)
      if ((this.#entries.get(hash)?.at ?? -Infinity) > now) return key
      if (!key) {
        this.#entries.delete(hash)
        return undefined
      }
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear()
      this.#entries.set(hash, { key, at: now, version })
      return key
    })
    const lookup = { found, at: now, version }
    this.#lookups.set(hash, lookup)
    const settled = () => { if (this.#lookups.get(hash) === lookup) this.#lookups.delete(hash) }
    found.then(settled, settled)
    return found
  }

  /** Whether what a lookup sent at `at` found may still be trusted at `now`: never when the clock went back. */
  #withinBound (now: number, at: number): boolean {
    return now >= at && now - at < this.#ttlMs
  }

  /** Read at most once per millisecond: a revocation is seen within 1 ms, at a fraction of the cost. */
  #currentVersion (now: number): number | undefined {
    if (now !== this.#versionReadAt) {
      this.#version = this.#store.keyVersion?.()
      this.#versionReadAt = now
    }
    return this.#version
  }
}
