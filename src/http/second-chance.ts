/**
 * A bounded map that drops by the second-chance rule (CLOCK): nearly least-recently-used,
 * while a use costs setting a flag. Entries live in a ring of slots; when the map is full, a
 * hand walks the ring: a slot used since the hand last passed keeps its entry and loses its
 * mark, the first unmarked one is dropped and its slot reused.
 *
 * The ring is what makes a drop cheap. Walking a Map from its oldest entry instead (delete
 * the first, or move a used one to the end) has to step over every entry deleted before it,
 * which V8 keeps in place until the table is rebuilt: with 10 000 entries that walk cost 6 µs
 * a drop, more than reading the pet from the store.
 */
export class SecondChanceMap<K, V> {
  readonly #slotOf = new Map<K, number>()
  readonly #keys: K[] = []
  readonly #values: V[] = []
  readonly #used: Uint8Array
  readonly #capacity: number
  #hand = 0

  constructor (capacity: number) {
    this.#capacity = capacity
    this.#used = new Uint8Array(capacity)
  }

  get size (): number {
    return this.#slotOf.size
  }

  get isFull (): boolean {
    return this.#slotOf.size >= this.#capacity
  }

  /** The value, marked as used. */
  get (key: K): V | undefined {
    const slot = this.#slotOf.get(key)
    if (slot === undefined) return undefined
    this.#used[slot] = 1
    return this.#values[slot]
  }

  /** Replaces the value, or adds the entry unmarked, dropping one first when full. */
  set (key: K, value: V): void {
    if (this.#capacity === 0) return
    let slot = this.#slotOf.get(key)
    if (slot === undefined) {
      slot = this.#keys.length < this.#capacity ? this.#keys.length : this.#dropOne()
      this.#keys[slot] = key
      this.#used[slot] = 0
      this.#slotOf.set(key, slot)
    }
    this.#values[slot] = value
  }

  /** Frees the slot of the first entry the hand finds unmarked. */
  #dropOne (): number {
    for (;;) {
      const slot = this.#hand
      this.#hand = slot + 1 === this.#capacity ? 0 : slot + 1
      if (this.#used[slot] === 0) {
        this.#slotOf.delete(this.#keys[slot]!)
        return slot
      }
      this.#used[slot] = 0
    }
  }
}
