import type { Socket } from 'node:net'

/** What the send timeout reads of a socket (a net.Socket; tests hand in stand-ins). */
export type WritingSocket = Pick<Socket, 'writableLength' | 'bytesWritten'> & { destroy(): void }

/** Where a socket's writing stood when it was last seen to move. */
interface Progress { delivered: number, since: number }

/**
 * The send timeout (nginx's send_timeout): a connection whose client takes none of the reply
 * for `timeoutMs` is destroyed, and the reply's memory with it. Node's own timers cannot see
 * this: a reply the client does not read never finishes, so the connection is never idle and
 * its request is complete. The clock measures time without progress, not the whole transfer:
 * it starts over whenever a write to the socket completes, so a slow reader that keeps reading
 * is never cut. Progress is seen per write, so a large body is written in chunks (the docs
 * script, ops/docs.ts).
 *
 * One timer for every connection, as Node checks its own request timeouts: a sweep every
 * `checkEveryMs` looks only at sockets with bytes waiting to be written. Returns the stop.
 */
export function closeStalledReplies (sockets: Set<WritingSocket>, options: { timeoutMs: number, checkEveryMs: number }): () => void {
  const seen = new WeakMap<WritingSocket, Progress>()
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const socket of sockets) {
      if (socket.writableLength === 0) {
        seen.delete(socket)
        continue
      }
      // Bytes handed to the kernel: bytesWritten counts what was given to the socket, the
      // writable length what still waits, so the difference grows with every completed write.
      const delivered = socket.bytesWritten - socket.writableLength
      const last = seen.get(socket)
      if (last === undefined || last.delivered !== delivered) seen.set(socket, { delivered, since: now })
      else if (now - last.since >= options.timeoutMs) socket.destroy()
    }
  }, options.checkEveryMs)
  sweep.unref()
  return () => clearInterval(sweep)
}
