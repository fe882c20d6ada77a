import type { ReplyCache } from './reply-cache.ts'
import type { ReceivedResponse, Send } from './transport.ts'

/** A read's response; `revalidated` when it is a 304 and its text the body kept for that ETag. */
export interface ReadResponse extends ReceivedResponse { revalidated: boolean }

/** GET a path, revalidating the reply kept for it. */
export type Read = (path: string, signal: AbortSignal | undefined) => Promise<ReadResponse>

const NO_STORE = /(?:^|,)\s*no-store\s*(?:,|$)/i
// An entity-tag (RFC 9110 section 8.8.3): only such a value can be sent back in If-None-Match;
// anything else would be refused there on every later read of the path.
const ENTITY_TAG = /^(?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*"$/

/**
 * Every read is sent, with If-None-Match when a tagged reply is kept for its path: never served
 * from the cache alone, so a revoked key, a sunset operation or a rate limit is always seen.
 */
export function createRevalidatingRead (send: Send, cache: ReplyCache | undefined): Read {
  return async function read (path, signal) {
    // Held from here on, so that a 304 has the body it answers even if the entry is evicted meanwhile.
    const kept = cache?.get(path)
    const headers = kept === undefined ? undefined : { 'if-none-match': kept.etag }
    const { response, text } = await send('GET', path, { headers, signal })
    // The transport lets a 304 through only for a request that sent If-None-Match.
    if (response.status === 304 && kept !== undefined) return { response, text: kept.text, revalidated: true }
    if (cache !== undefined) remember(cache, path, response, text)
    return { response, text, revalidated: false }
  }
}

/** A 200 with an entity tag is kept unless it says no-store; any other reply forgets what was kept. */
function remember (cache: ReplyCache, path: string, response: Response, text: string): void {
  const etag = response.headers.get('etag')
  if (response.status === 200 && etag !== null && ENTITY_TAG.test(etag) && !NO_STORE.test(response.headers.get('cache-control') ?? '')) cache.set(path, { etag, text })
  else cache.delete(path)
}
