import { INT64_MAX, INT64_MIN } from './schemas.ts'

const INTEGER_LITERAL = /^-?(0|[1-9]\d*)$/

/** Whether a bigint lies in the signed 64-bit range. */
export function isInt64 (value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX
}

/** Reads a decimal integer literal exactly; undefined when it is not one or lies outside int64. */
export function parseInt64 (text: string): bigint | undefined {
  if (text.length > 20 || !INTEGER_LITERAL.test(text)) return undefined
  const value = BigInt(text)
  return isInt64(value) ? value : undefined
}

const CURSOR_PREFIX = 'after:'

/** The keyset position "after this id", opaque to callers. */
export function encodeCursor (afterId: bigint): string {
  return Buffer.from(CURSOR_PREFIX + afterId.toString()).toString('base64url')
}

export function decodeCursor (cursor: string): bigint | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('latin1')
  if (!text.startsWith(CURSOR_PREFIX)) return undefined
  const id = parseInt64(text.slice(CURSOR_PREFIX.length))
  // Re-encoding must give the same text, so that one position has exactly one spelling.
  return id !== undefined && encodeCursor(id) === cursor ? id : undefined
}
