import { dropOneUnused, type Marked } from '../second-chance.ts'

/**
 * Answers that can never change, kept serialized. Pets are immutable (no operation updates or
 * deletes one) and, in a store whose ids are assigned in commit order (SQLite: one writer at
 * a time), a new pet always gets a larger id than every pet already visible. So a full page
 * (one that has a next page) and a found pet are final; only the last page of a listing can
 * still grow, and it is never cached. Bounded, nearly least-recently-used (dropOneUnused).
 *
 * Once full, only one miss in FULL_ADMIT_EVERY is kept: when reads spread over far more pets
 * than fit (a million pets read at random), replacing an entry on every miss costs more than
 * the few hits it buys, while answers read again and again still get in after a few misses.
 */
const FULL_ADMIT_EVERY = 8

interface Slot<V> extends Marked { value: V }

export class FinalAnswers<V> {
  readonly #entries = new Map<string, Slot<V>>()
  readonly #max: number
  #missesWhileFull = 0

  constructor (max: number) {
    this.#max = max
  }

  get (key: string): V | undefined {
    const slot = this.#entries.get(key)
    if (slot === undefined) return undefined
    slot.used = true
    return slot.value
  }

  set (key: string, value: V): void {
    if (this.#max === 0) return
    if (this.#entries.size >= this.#max) {
      if (++this.#missesWhileFull % FULL_ADMIT_EVERY !== 0) return
      dropOneUnused(this.#entries)
    }
    this.#entries.set(key, { value, used: false })
  }
}
