import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { StoreUnavailableError } from './errors.ts'

interface Pending { work: () => unknown, oneStatement: boolean, resolve: (value: any) => void, reject: (error: unknown) => void }

/**
 * Group commit for SQLite: writes that arrive in the same turn of the event loop share one
 * transaction, so one fsync (synchronous=FULL) makes all of them durable. Each caller is
 * answered only after the COMMIT that holds its write has returned. One failing write is
 * rolled back alone and the others still commit: a write of several statements runs in a
 * savepoint of its own; a write of one statement needs none, as SQLite undoes a failed
 * statement by itself and keeps the transaction.
 */
export class GroupCommit {
  readonly #db: DatabaseSync
  #queue: Pending[] = []
  // Prepared once: parsing the same SQL text for every write in a batch costs more than the write.
  readonly #begin: StatementSync
  readonly #commit: StatementSync
  readonly #savepoint: StatementSync
  readonly #release: StatementSync
  readonly #rollbackToSavepoint: StatementSync

  constructor (db: DatabaseSync) {
    this.#db = db
    this.#begin = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#savepoint = db.prepare('SAVEPOINT write')
    this.#release = db.prepare('RELEASE write')
    this.#rollbackToSavepoint = db.prepare('ROLLBACK TO write')
  }

  /** `oneStatement`: the write is a single SQL statement, so it can skip its savepoint. */
  run<T> (work: () => T, oneStatement = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, oneStatement, resolve, reject })
      // setImmediate runs after the poll phase: every request read in this turn joins the batch.
      if (this.#queue.length === 1) setImmediate(() => this.#flush())
    })
  }

  #flush (): void {
    const batch = this.#queue
    this.#queue = []
    const results: Array<{ ok: true, value: unknown } | { ok: false, error: unknown }> = []
    try {
      this.#begin.run()
      for (const { work, oneStatement } of batch) {
        if (oneStatement) {
          try {
            results.push({ ok: true, value: work() })
          } catch (error) {
            // An I/O or memory error can end the transaction itself: then nothing in the batch holds.
            if (!this.#db.isTransaction) throw error
            results.push({ ok: false, error })
          }
          continue
        }
        this.#savepoint.run()
        try {
          results.push({ ok: true, value: work() })
          this.#release.run()
        } catch (error) {
          this.#rollbackToSavepoint.run()
          this.#release.run()
          results.push({ ok: false, error })
        }
      }
      this.#commit.run()
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK')
      const failure = isBusy(error) ? new StoreUnavailableError('the SQLite database stayed locked by another writer', { cause: error }) : error
      for (const pending of batch) pending.reject(failure)
      return
    }
    batch.forEach((pending, i) => {
      const result = results[i]!
      if (result.ok) pending.resolve(result.value)
      else pending.reject(result.error)
    })
  }
}

// SQLITE_BUSY (5) and SQLITE_LOCKED (6): another process (the CLI importing, say) holds the
// write lock past the busy timeout. That is a store outage for the caller, not a bug.
function isBusy (error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode
  return typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6)
}
