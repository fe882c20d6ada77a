/** A read's reply kept for revalidation: the ETag it came with and its body's text. */
export interface TaggedReply { etag: string, text: string }

/** The replies of one client, by request path, least recently used first out. */
export interface ReplyCache {
  get (path: string): TaggedReply | undefined
  set (path: string, reply: TaggedReply): void
  delete (path: string): void
  /** What the kept entries count for against maxBytes. */
  readonly bytes: number
}

/** How much one client keeps: `maxBytes` (4 MiB by default), counted as in `entryBytes`. */
export interface CacheOptions { maxBytes?: number }

export const DEFAULT_CACHE_MAX_BYTES = 4 * 1024 * 1024

/**
 * An entry counts two bytes per UTF-16 code unit of its path, ETag and body text: what the
 * strings take in memory at most, so the bound holds whatever the names are written in.
 */
export function entryBytes (path: string, reply: TaggedReply): number {
  return 2 * (path.length + reply.etag.length + reply.text.length)
}

/**
 * A Map keeps insertion order, so moving an entry to the end on each use makes its first entry
 * the least recently used: the whole LRU is a Map and a byte count.
 */
export function createReplyCache ({ maxBytes = DEFAULT_CACHE_MAX_BYTES }: CacheOptions = {}): ReplyCache {
  if (!(Number.isSafeInteger(maxBytes) && maxBytes >= 0)) throw new RangeError(`cache.maxBytes ${maxBytes} is not a whole number of bytes`)
  const entries = new Map<string, TaggedReply>()
  let bytes = 0

  function remove (path: string): void {
    const reply = entries.get(path)
    if (reply === undefined) return
    entries.delete(path)
    bytes -= entryBytes(path, reply)
  }

  return {
    get (path) {
      const reply = entries.get(path)
      if (reply !== undefined) {
        entries.delete(path)
        entries.set(path, reply)
      }
      return reply
    },
    set (path, reply) {
      remove(path)
      const size = entryBytes(path, reply)
      // A reply larger than the whole bound is not kept, rather than emptying the cache for it.
      if (size > maxBytes) return
      entries.set(path, reply)
      bytes += size
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break
        remove(oldest)
      }
    },
    delete: remove,
    get bytes () { return bytes }
  }
}
