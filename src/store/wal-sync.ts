import { closeSync, fdatasync, openSync } from 'node:fs'

/** Flushes a file to stable storage and calls back; fs.fdatasync on the libuv thread pool by default. */
export type SyncFile = (fd: number, done: (error: Error | null) => void) => void

interface Waiting { resolve: () => void, reject: (error: Error) => void }

/**
 * Makes commits durable without holding the event loop. The pet writer commits with
 * synchronous=NORMAL: COMMIT writes the transaction to the WAL and returns without an fsync.
 * Its callers are answered only after `durable()` resolves, that is after an fdatasync of the
 * WAL that began after their COMMIT returned; from then on the transaction survives a power
 * cut as with synchronous=FULL (SQLite's recovery replays every committed frame of the WAL).
 * The fdatasync runs on the thread pool while the event loop serves other requests; commits
 * that return while one runs share the next one, so a burst costs one or two syncs, not one
 * each.
 */
export class WalSync {
  readonly #path: string
  readonly #sync: SyncFile
  #fd: number | undefined
  #waiting: Waiting[] = []
  #running: Promise<void> | undefined

  constructor (walPath: string, sync: SyncFile = fdatasync) {
    this.#path = walPath
    this.#sync = sync
  }

  /** Resolves once everything written to the WAL before this call is on stable storage. */
  durable (): Promise<void> {
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
    const done = (error: Error | null) => {
      this.#running = undefined
      finished()
      for (const waiting of batch) {
        if (error) waiting.reject(error)
        else waiting.resolve()
      }
      if (this.#waiting.length > 0) this.#start()
    }
    let fd: number
    try {
      // Opened once the first commit has created the WAL. SQLite deletes the WAL only when
      // the last connection to the database closes, and the store's own stay open until
      // close(): this descriptor names the file SQLite writes for as long as it is used.
      fd = this.#fd ??= openSync(this.#path, 'r')
    } catch (error) {
      done(error as Error)
      return
    }
    this.#sync(fd, done)
  }

  /** Waits for the sync in flight, then lets the file go. */
  async close (): Promise<void> {
    while (this.#running) await this.#running
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }
}
