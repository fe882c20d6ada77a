import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs'
import { dirname } from 'node:path'

/** Flushes a file to stable storage and calls back; fs.fdatasync on the libuv thread pool by default. */
export type SyncFile = (fd: number, done: (error: Error | null) => void) => void

interface Waiting { resolve: () => void, reject: (error: Error) => void }

/**
 * Makes commits durable without holding the event loop. The pet writer commits with
 * synchronous=NORMAL: COMMIT writes the transaction to the WAL and returns without an fsync.
 * Its callers' promises settle only after `durable()` resolves, that is after an fdatasync of the
 * WAL that began after their COMMIT returned; from then on the transaction survives a power
 * cut as with synchronous=FULL (SQLite's recovery replays every committed frame of the WAL).
 * The fdatasync runs on the thread pool while the event loop serves other requests; commits
 * that return while one runs share the next one, so a burst costs one or two syncs, not one
 * each.
 *
 * A failed sync is final. Linux reports a write-back error once and may drop the pages it
 * could not write, so a later sync that succeeds proves nothing about the frames before it
 * (and WAL frames are chained: a lost one loses all that follow). Every later `durable()`
 * fails with the first error, the store reports itself not ready, and only a restart, whose
 * recovery reads what is really on disk, writes again: PostgreSQL treats a failed fsync alike.
 */
export class WalSync {
  readonly #fd: number
  readonly #sync: SyncFile
  #waiting: Waiting[] = []
  #running: Promise<void> | undefined
  #failure: Error | undefined

  /**
   * Opens the WAL, which must exist (the connection that writes has opened the database in
   * WAL mode), and syncs its directory once so that the file itself survives a power cut.
   */
  constructor (walPath: string, sync: SyncFile = fdatasync) {
    this.#fd = openSync(walPath, 'r+')
    try {
      const directory = openSync(dirname(walPath), 'r')
      try { fsyncSync(directory) } finally { closeSync(directory) }
    } catch (error) {
      closeSync(this.#fd)
      throw error
    }
    this.#sync = sync
  }

  /** The error of the sync that failed, if one did: from then on nothing is durable. */
  get failure (): Error | undefined {
    return this.#failure
  }

  /** Resolves once everything written to the WAL before this call is on stable storage. */
  durable (): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject })
      if (this.#running === undefined) this.#start()
    })
  }

  #start () {
    const batch = this.#waiting
    this.#waiting = []
    let finished!: () => void
    this.#running = new Promise((resolve) => { finished = resolve })
    this.#sync(this.#fd, (error) => {
      this.#running = undefined
      finished()
      if (error) this.#failure ??= error
      if (this.#failure) {
        // Those who came during the failed sync cannot be made durable either.
        for (const waiting of batch.concat(this.#waiting)) waiting.reject(this.#failure)
        this.#waiting = []
        return
      }
      for (const waiting of batch) waiting.resolve()
      if (this.#waiting.length > 0) this.#start()
    })
  }

  /** Waits for the sync in flight, then lets the file go. */
  async close (): Promise<void> {
    while (this.#running) await this.#running
    closeSync(this.#fd)
  }
}
