import type { StorageConditionError } from './store-errors.ts'

/** Told the error when writes start failing for a condition of the storage, and undefined when one succeeds again. */
export type WriteStateListener = (failure: StorageConditionError | undefined) => void

/**
 * Whether the store's writes work. A write that fails for a condition of the storage (disk
 * full, read-only, I/O error) marks them failing, and the next write that succeeds marks them
 * working again; each change is told to the listeners once, however many requests fail in
 * between. `lasting` names a failure no later success can clear (a failed sync of the SQLite
 * WAL: only a restart writes again), while there is one.
 */
export class WriteHealth {
  readonly #lasting: () => Error | undefined
  readonly #listeners: WriteStateListener[] = []
  #failure: StorageConditionError | undefined

  constructor (lasting: () => Error | undefined = () => undefined) {
    this.#lasting = lasting
  }

  /** Why writes fail now; undefined while they work. */
  get failure (): StorageConditionError | undefined {
    return this.#failure
  }

  watch (listener: WriteStateListener): void {
    this.#listeners.push(listener)
  }

  /**
   * Runs a write. asCondition turns what it threw into a StorageConditionError when the storage
   * is the cause (undefined otherwise): that error is thrown instead and writes are failing.
   */
  track<T> (write: () => Promise<T>, asCondition: (error: unknown) => StorageConditionError | undefined): Promise<T> {
    return write().then((value) => {
      if (this.#failure !== undefined && this.#lasting() === undefined) this.#change(undefined)
      return value
    }, (error: unknown) => {
      const condition = asCondition(error)
      if (condition === undefined) throw error
      if (this.#failure === undefined) this.#change(condition)
      throw condition
    })
  }

  #change (failure: StorageConditionError | undefined): void {
    this.#failure = failure
    for (const listener of this.#listeners) listener(failure)
  }
}
