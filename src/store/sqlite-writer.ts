import { Worker } from 'node:worker_threads'
import { StoreUnavailableError } from './errors.ts'
import type { PetWrite } from './sqlite-pet-writes.ts'
import type { WriterReply, WriterRequest } from './sqlite-writer-thread.ts'

interface Waiting { resolve: (value: any) => void, reject: (error: unknown) => void }

// The writer holds little: a connection, a few statements and a queue of small writes.
const WRITER_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 32 }

/**
 * Sends pet writes to the writer thread (sqlite-writer-thread.ts) and answers each caller
 * when the commit holding its write has returned there. The thread starts with the first
 * write, so reads-only processes (and start-up) never pay for it; it keeps the process alive
 * only while a write is waiting. If it dies, every waiting write fails as a store outage
 * (503) and the next write starts a new one.
 */
export class SqliteWriter {
  readonly #path: string
  readonly #waiting = new Map<number, Waiting>()
  #worker: Worker | undefined
  #seq = 0
  #outbox: WriterRequest[] = []

  constructor (path: string) {
    this.#path = path
  }

  run<T> (write: PetWrite): Promise<T> {
    const worker = this.#worker ?? this.#start()
    const seq = ++this.#seq
    if (this.#waiting.size === 0) worker.ref()
    // Writes of one turn of the event loop travel in one message: a post costs more than a row.
    if (this.#outbox.length === 0) setImmediate(() => this.#send(worker))
    this.#outbox.push({ seq, ...write })
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(seq, { resolve, reject })
    })
  }

  #send (worker: Worker) {
    if (this.#outbox.length === 0) return
    const requests = this.#outbox
    this.#outbox = []
    worker.postMessage(requests)
  }

  #start (): Worker {
    const worker = new Worker(new URL('./sqlite-writer-thread.ts', import.meta.url), { workerData: { path: this.#path }, resourceLimits: WRITER_LIMITS })
    worker.unref()
    worker.on('message', (replies: WriterReply) => this.#settle(replies))
    worker.on('error', (error) => this.#lost(worker, error))
    worker.on('exit', (code) => this.#lost(worker, new Error(`the writer thread exited with code ${code}`)))
    this.#worker = worker
    return worker
  }

  #settle (replies: WriterReply) {
    for (const [seq, outcome] of replies) {
      const waiting = this.#waiting.get(seq)
      if (!waiting) continue
      this.#waiting.delete(seq)
      if ('value' in outcome) waiting.resolve(outcome.value)
      else waiting.reject(outcome.error.unavailable ? new StoreUnavailableError(outcome.error.message) : new Error(outcome.error.message))
    }
    if (this.#waiting.size === 0) this.#worker?.unref()
  }

  #lost (worker: Worker, cause: Error) {
    if (this.#worker !== worker) return
    this.#worker = undefined
    const failure = new StoreUnavailableError('the SQLite writer thread stopped', { cause })
    for (const waiting of this.#waiting.values()) waiting.reject(failure)
    this.#waiting.clear()
  }

  /** Lets the writer commit what it was given and close its connection; waits for it to end. */
  async close (): Promise<void> {
    const worker = this.#worker
    if (!worker) return
    if (this.#outbox.length > 0) this.#send(worker)
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.postMessage('close')
    await exited
  }
}
