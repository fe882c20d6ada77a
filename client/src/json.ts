/**
 * JSON with exact int64 fields. `id` and `categoryId` are signed 64-bit integers: a JS number
 * loses precision beyond 2^53−1, so they are read from their source text, as bigint or as the
 * decimal string (for callers who pass them on to JSON.stringify, which refuses bigint), and
 * written as bare integer literals, over the whole int64 range.
 */

/** How int64 fields come back: exact bigint, or their exact decimal text. */
export type Int64Mode = 'bigint' | 'string'

const INT64_FIELDS = new Set(['id', 'categoryId'])

interface ReviverContext { source?: string }
type Reviver = (this: unknown, key: string, value: unknown) => unknown

function exactReviver (exact: (digits: string) => bigint | string): Reviver {
  const reviver = (key: string, value: unknown, context?: ReviverContext): unknown => {
    // Without the source text (older engines) the quoted fallback below has already run.
    if (typeof value === 'number' && INT64_FIELDS.has(key)) return exact(context?.source ?? String(value))
    if (typeof value === 'string' && INT64_FIELDS.has(key) && value.startsWith(QUOTED)) return exact(value.slice(QUOTED.length))
    return value
  }
  return reviver as Reviver
}

const REVIVERS: Record<Int64Mode, Reviver> = { bigint: exactReviver(BigInt), string: exactReviver(String) }

// JSON.parse's reviver sees each number's source text in Node 22+, Chrome 114+, Firefox 135+, Safari 18.4+.
const hasSourceText = (() => {
  let seen: string | undefined
  JSON.parse('1', ((_key: string, value: unknown, context?: ReviverContext) => { seen = context?.source; return value }) as Reviver)
  return seen === '1'
})()

const QUOTED = '\u0000int64:'
// Inside a JSON string every quote is escaped, so `"id":` followed by digits is always a member.
const INT64_MEMBER = /"(id|categoryId)"(\s*:\s*)(-?\d+)/g

/** Parses a response body; int64 fields become bigint (or decimal strings), exact. */
export function parseJson (text: string, int64: Int64Mode = 'bigint', sourceText = hasSourceText): unknown {
  if (sourceText) return JSON.parse(text, REVIVERS[int64])
  const quoted = text.replace(INT64_MEMBER, (_match, key: string, colon: string, digits: string) => `"${key}"${colon}"\\u0000int64:${digits}"`)
  return JSON.parse(quoted, REVIVERS[int64])
}

/** Serializes a request body; bigint values are written as exact integer literals. */
export function stringifyJson (value: unknown): string {
  const text = JSON.stringify(value, (_key, item: unknown) => typeof item === 'bigint' ? QUOTED + item.toString() : item)
  return text.replace(/"\\u0000int64:(-?\d+)"/g, '$1')
}

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/** An int64 as a caller may give it: a bigint, a safe-integer number, or the decimal text. */
export type Int64Input = bigint | number | string

/** Accepts a bigint, a safe-integer number or a decimal integer string; anything else would not be exact. */
export function toInt64 (value: Int64Input, field: string): bigint {
  if (typeof value === 'number' && !Number.isInteger(value)) throw new RangeError(`${field} ${value} is not an integer`)
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    // Beyond 2^53 a number cannot tell neighbouring integers apart, so the value the caller
    // meant may already have been rounded to this one before it got here.
    throw new RangeError(`${field} ${BigInt(value)} is beyond Number.MAX_SAFE_INTEGER, where a number may already be rounded; pass a bigint (e.g. ${field}: 9223372036854775807n) or its decimal string`)
  }
  if (typeof value === 'string' && !/^-?\d+$/.test(value)) throw new RangeError(`${field} ${JSON.stringify(value)} is not a decimal integer`)
  const exact = BigInt(value)
  if (exact < INT64_MIN || exact > INT64_MAX) throw new RangeError(`${field} ${exact} is outside the signed 64-bit range`)
  return exact
}
