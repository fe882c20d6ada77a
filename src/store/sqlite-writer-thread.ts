import { parentPort, workerData } from 'node:worker_threads'
import { StoreUnavailableError } from './errors.ts'
import { GroupCommit } from './group-commit.ts'
import { openDatabase } from './sqlite-open.ts'
import { PetWrites, type PetWrite } from './sqlite-pet-writes.ts'

/**
 * The pet writer: its own connection to the store's file, in a thread of its own, so that the
 * fsync of each commit (synchronous=FULL) holds this thread and not the one serving requests.
 * Writes that arrive while a commit runs queue up and share the next one (group commit).
 */
export type WriterRequest = { seq: number } & PetWrite
export type WriterOutcome = { value: unknown } | { error: { unavailable: boolean, message: string } }
export type WriterReply = Array<[seq: number, outcome: WriterOutcome]>

const port = parentPort!
const db = openDatabase((workerData as { path: string }).path)
const writes = new PetWrites(db)
const commits = new GroupCommit(db)
let replies: WriterReply = []

function reply (seq: number, outcome: WriterOutcome) {
  // One message per batch: every caller of a commit is answered in one post.
  if (replies.length === 0) queueMicrotask(sendReplies)
  replies.push([seq, outcome])
}

function sendReplies () {
  port.postMessage(replies)
  replies = []
}

port.on('message', (requests: WriterRequest[] | 'close') => {
  if (requests === 'close') {
    // After the commit already scheduled for the writes that came before.
    setImmediate(() => {
      db.close()
      port.close()
    })
    return
  }
  for (const request of requests) {
    commits.run(() => writes.apply(request), request.op === 'createPet').then(
      (value) => reply(request.seq, { value }),
      (error: unknown) => reply(request.seq, {
        error: { unavailable: error instanceof StoreUnavailableError, message: error instanceof Error ? error.message : String(error) }
      })
    )
  }
})
