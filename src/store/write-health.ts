import type { StorageFailureError } from './store-errors.ts'

/** Told the error when writes start failing for a storage failure, and undefined when one succeeds again. */
export type WriteStateListener = (failure: StorageFailureError | undefined) => void

/**
 * Whether the store's writes work. A write that fails for a storage failure (disk
 * full, read-only, I/O error) marks them failing, and the next write that succeeds marks them
 * working again; each change is told to the listeners once, however many requests fail in
 * between. `permanentFailure` names a failure no later success can clear (a failed sync of the SQLite
 * WAL: only a restart writes again), while there is one.
 */
export class WriteHealth {
  readonly #permanentFailure: () => Error | undefined
  readonly #listeners: WriteStateListener[] = []
  #failure: StorageFailureError | undefined

  constructor (permanentFailure: () => Error | undefined = () => undefined) {
    this.#permanentFailure = permanentFailure
  }

  /** Why writes fail now; undefined while they work. */
  get failure (): StorageFailureError | undefined {
    return this.#failure
  }

  watch (listener: WriteStateListener): void {
    this.#listeners.push(listener)
  }

  /**
   * Runs a write. asStorageFailure turns what it threw into a StorageFailureError when the storage
   * is the cause (undefined otherwise): that error is thrown instead and writes are failing.
   */
  track<T> (write: () => Promise<T>, asStorageFailure: (error: unknown) => StorageFailureError | undefined): Promise<T> {
    return write().then((value) => {
      if (this.#failure !== undefined && this.#permanentFailure() === undefined) this.#change(undefined)
      return value
    }, (error: unknown) => {
      const failure = asStorageFailure(error)
      if (failure === undefined) throw error
      if (this.#failure === undefined) this.#change(failure)
      throw failure
    })
  }

  #change (failure: StorageFailureError | undefined): void {
    this.#failure = failure
    for (const listener of this.#listeners) listener(failure)
  }
}
