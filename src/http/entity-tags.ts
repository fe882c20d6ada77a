import { hash } from 'node:crypto'

/**
 * A strong entity tag (RFC 9110 section 8.8.3) made from the bytes it validates: the first 22
 * characters (132 bits) of the base64url SHA-256 of the body. Derived from the content alone,
 * so every instance, on either store, gives the same tag for the same reply, and no tag has to
 * be stored or shared.
 */
export function contentHash (body: string | Buffer): string {
  return hash('sha256', body, 'base64url').slice(0, 22)
}

export const strongTag = (body: string | Buffer) => `"${contentHash(body)}"`

/** Each entity tag of a field value, as sent (`W/` prefix and quotes included). */
const ENTITY_TAG = /(?:W\/)?"[^"]*"/g

/**
 * Whether If-None-Match names this tag (RFC 9110 section 13.1.2): `*`, or one tag of a list that
 * equals it by the weak comparison (a `W/` prefix is ignored, the opaque part must be the same).
 * A value that is no list of entity tags names nothing, and the request is answered in full.
 */
export function noneMatchNames (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  // What a client sends back most: the one tag it was given, as it was given.
  if (ifNoneMatch === etag) return true
  if (ifNoneMatch.trim() === '*') return true
  for (const [tag] of ifNoneMatch.matchAll(ENTITY_TAG)) {
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true
  }
  return false
}
