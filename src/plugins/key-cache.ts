import type { ApiKeyRecord, Store } from '../store/types.ts'

interface Entry { key: ApiKeyRecord, at: number, version: number | undefined }

// Enough for every key a deployment has; past it the cache starts over rather than grow.
const MAX_ENTRIES = 10_000

/**
 * Keeps looked-up keys in memory so the hot path needs no store round trip. Exact where the
 * store can say that keys changed (SQLite's key change counter: a revocation from the CLI is seen on
 * the next request); elsewhere an entry is trusted for at most ttlMs, the documented bound on
 * how long a revoked key keeps working on another instance.
 */
export class KeyCache {
  readonly #entries = new Map<string, Entry>()
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
    if (entry && (version === undefined ? now - entry.at < this.#ttlMs : entry.version === version)) return entry.key
    return this.#store.findApiKeyByHash(hash).then((key) => {
      if (!key) {
        this.#entries.delete(hash)
        return undefined
      }
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear()
      this.#entries.set(hash, { key, at: now, version })
      return key
    })
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
