/**
 * Answers that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite: one writer at
 * a time), a new pet always gets a larger id than every pet already visible. So a full page
 * (one that has a next page) and a found pet are final; only the last page of a listing can
 * still grow, and it is never cached. Bounded LRU: the oldest entry goes first.
 */
export class FinalAnswers<V> {
  readonly #entries = new Map<string, V>()
  readonly #max: number

  constructor (max: number) {
    this.#max = max
  }

  get (key: string): V | undefined {
    const value = this.#entries.get(key)
    if (value !== undefined) {
      // Re-insert: Map keeps insertion order, so the first key is always the least recently used.
      this.#entries.delete(key)
      this.#entries.set(key, value)
    }
    return value
  }

  set (key: string, value: V): void {
    if (this.#max === 0) return
    this.#entries.set(key, value)
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!)
  }
}
