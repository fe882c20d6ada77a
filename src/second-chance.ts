/** An entry of a bounded map that is marked each time it is used. */
export interface Marked { used: boolean }

/**
 * Drops one entry by the second-chance rule (CLOCK): from the oldest entry on, one used since
 * it was last passed goes to the back of the map with its mark cleared; the first unmarked one
 * is dropped. Nearly least-recently-used, while a use costs setting a flag: moving an entry to
 * the end of the map on every use (delete, then set) cost more than the lookup itself.
 */
export function dropOneUnused<K, V extends Marked> (entries: Map<K, V>): void {
  for (const [key, entry] of entries) {
    entries.delete(key)
    if (!entry.used) return
    entry.used = false
    entries.set(key, entry)
  }
}
