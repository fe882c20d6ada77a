import { SecondChanceMap } from '../http/second-chance.ts'

/**
 * Answers that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite: one writer at
 * a time), a new pet always gets a larger id than every pet already visible. So a full page
 * (one that has a next page) and a found pet are final; only the last page of a listing can
 * still grow, and it is never cached. Bounded, nearly least-recently-used (SecondChanceMap).
 *
 * Once full, only one miss in FULL_ADMIT_EVERY is kept: when reads spread over far more pets
 * than fit (a million pets read at random), replacing an entry on every miss costs more than
 * the few hits it buys, while answers read again and again still get in after a few misses.
 */
const FULL_ADMIT_EVERY = 8

export class FinalAnswers<V> {
  readonly #entries: SecondChanceMap<string, V>
  #missesWhileFull = 0

  constructor (max: number) {
    this.#entries = new SecondChanceMap(max)
  }

  get (key: string): V | undefined {
    return this.#entries.get(key)
  }

  set (key: string, value: V): void {
    if (this.#entries.isFull && ++this.#missesWhileFull % FULL_ADMIT_EVERY !== 0) return
    this.#entries.set(key, value)
  }
}
