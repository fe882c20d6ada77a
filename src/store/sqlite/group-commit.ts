import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { StoreUnavailableError } from '../store-errors.ts'
import { rollback } from './storage-failures.ts'

/** Settles a write caller's promise: called once the commit that holds the write is durable. */
type Settle = () => void

interface Pending {
  /** Runs the write inside the open transaction and returns how to settle its caller's promise. */
  write: () => Settle
  oneStatement: boolean
  firstTriedAt: number
  reject: (error: unknown) => void
}

export interface GroupCommitOptions {
  /**
   * Resolves once the commits made before the call are on stable storage (see WalSync). The
   * callers of a batch get their results after it; without it, after COMMIT returns.
   */
  durable?: () => Promise<void>
  /**
   * How long a batch waits for the write lock that another process (the CLI importing, say)
   * holds, retrying without holding the event loop; the connection's busy timeout is 0.
   * Without it, the connection's own busy timeout waits.
   */
  lockWaitMs?: number
}

// Between two tries for the write lock.
const LOCK_RETRY_MS = 5

/**
 * Group commit for SQLite: writes that arrive in the same turn of the event loop, or while
 * the sync of the previous commit runs, share one transaction, so one sync makes all of them
 * durable. Each caller gets its result only after the commit that holds its write is durable.
 * One failing write is rolled back alone and the others still commit: a write of several
 * statements runs in a savepoint of its own; a write of one statement needs none, as SQLite
 * undoes a failed statement by itself and keeps the transaction.
 */
export class GroupCommit {
  readonly #db: DatabaseSync
  readonly #options: GroupCommitOptions
  #queue: Pending[] = []
  #scheduled = false
  readonly #syncing = new Set<Promise<void>>()
  // Prepared once: parsing the same SQL text for every write in a batch costs more than the write.
  readonly #begin: StatementSync
  readonly #commit: StatementSync
  readonly #savepoint: StatementSync
  readonly #release: StatementSync
  readonly #rollbackToSavepoint: StatementSync

  constructor (db: DatabaseSync, options: GroupCommitOptions = {}) {
    this.#db = db
    this.#options = options
    this.#begin = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#savepoint = db.prepare('SAVEPOINT write')
    this.#release = db.prepare('RELEASE write')
    this.#rollbackToSavepoint = db.prepare('ROLLBACK TO write')
  }

  /** `oneStatement`: the write is a single SQL statement, so it can skip its savepoint. */
  run<T> (work: () => T, oneStatement = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const write = () => {
        const value = work()
        return () => resolve(value)
      }
      this.#queue.push({ write, oneStatement, firstTriedAt: Number.NaN, reject })
      // While a sync runs, writes wait for it to end and then commit together: they could not
      // get their results before the sync after it anyway, and one commit writes fewer WAL pages
      // than one per turn of the event loop.
      if (this.#syncing.size > 0) return
      // setImmediate runs after the poll phase: every request read in this turn joins the batch.
      this.#schedule(() => setImmediate(() => this.#flush()))
    })
  }

  /** Commits what is queued now and waits until every commit made is durable. */
  async drain (): Promise<void> {
    while (this.#queue.length > 0 || this.#syncing.size > 0) {
      if (this.#queue.length > 0) this.#flush()
      await Promise.all(this.#syncing)
      // A batch waiting for the write lock retries on a timer: give it its turn.
      if (this.#queue.length > 0) await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS))
    }
  }

  #schedule (later: () => void) {
    if (this.#scheduled) return
    this.#scheduled = true
    later()
  }

  #flush (): void {
    this.#scheduled = false
    const batch = this.#queue
    this.#queue = []
    if (batch.length === 0) return
    const settles: Settle[] = []
    try {
      if (!this.#lock(batch)) return
      for (const pending of batch) settles.push(this.#attempt(pending))
      this.#commit.run()
    } catch (error) {
      rollback(this.#db)
      const failure = isBusy(error) ? new StoreUnavailableError('the SQLite database stayed locked by another writer', { cause: error }) : error
      for (const pending of batch) pending.reject(failure)
      return
    }
    if (!this.#options.durable) {
      for (const settle of settles) settle()
      return
    }
    const synced = this.#options.durable().then(
      () => { for (const settle of settles) settle() },
      (error: unknown) => {
        const failure = new StoreUnavailableError('the SQLite WAL could not be synced to disk', { cause: error })
        for (const pending of batch) pending.reject(failure)
      }
    ).finally(() => {
      this.#syncing.delete(synced)
      // The writes that came during the sync: committed now, so the next sync starts at once.
      if (this.#queue.length > 0 && !this.#scheduled) this.#flush()
    })
    this.#syncing.add(synced)
  }

  /**
   * Runs one write of the batch. A write that fails is undone alone and its caller gets the
   * error after the commit; an error that ended the whole transaction is thrown on.
   */
  #attempt (pending: Pending): Settle {
    if (pending.oneStatement) {
      try {
        return pending.write()
      } catch (error) {
        // An I/O or memory error can end the transaction itself: then nothing in the batch holds.
        if (!this.#db.isTransaction) throw error
        return () => pending.reject(error)
      }
    }
    this.#savepoint.run()
    try {
      const settle = pending.write()
      this.#release.run()
      return settle
    } catch (error) {
      this.#rollbackToSavepoint.run()
      this.#release.run()
      return () => pending.reject(error)
    }
  }

  /**
   * Takes the write lock. With a lock wait set, a lock held elsewhere puts the batch back in
   * front of the queue and tries again shortly; a write whose own wait is over gets the busy
   * error as an outage (503), the others keep waiting.
   */
  #lock (batch: Pending[]): boolean {
    const now = performance.now()
    for (const pending of batch) if (Number.isNaN(pending.firstTriedAt)) pending.firstTriedAt = now
    try {
      this.#begin.run()
      return true
    } catch (error) {
      const waitMs = this.#options.lockWaitMs
      if (waitMs === undefined || !isBusy(error)) throw error
      const failure = new StoreUnavailableError('the SQLite database stayed locked by another writer', { cause: error })
      const waiting = batch.filter((pending) => {
        if (now - pending.firstTriedAt < waitMs) return true
        pending.reject(failure)
        return false
      })
      this.#queue = waiting.concat(this.#queue)
      if (this.#queue.length > 0) this.#schedule(() => setTimeout(() => this.#flush(), LOCK_RETRY_MS))
      return false
    }
  }
}

// SQLITE_BUSY (5) and SQLITE_LOCKED (6): another process (the CLI importing, say) holds the
// write lock past the wait allowed. That is a store outage for the caller, not a bug.
function isBusy (error: unknown): boolean {
  if (!(error instanceof Error) || !('errcode' in error) || typeof error.errcode !== 'number') return false
  const primary = error.errcode & 0xff
  return primary === 5 || primary === 6
}
