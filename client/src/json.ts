/**
 * JSON with exact int64 fields. `id` and `categoryId` are signed 64-bit integers: a JS number
 * loses precision beyond 2^53−1, so they are always read as bigint and written as bare integer
 * literals, over the whole int64 range.
 */

const INT64_FIELDS = new Set(['id', 'categoryId'])

interface ReviverContext { source?: string }
type Reviver = (this: unknown, key: string, value: unknown) => unknown

function exactReviver (key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value === 'number' && INT64_FIELDS.has(key)) {
    // Without the source text (older engines) the quoted fallback below has already run.
    return BigInt(context?.source ?? value)
  }
  if (typeof value === 'string' && INT64_FIELDS.has(key) && value.startsWith(QUOTED)) return BigInt(value.slice(QUOTED.length))
  return value
}

// JSON.parse's reviver sees each number's source text in Node 22+, Chrome 114+, Firefox 135+, Safari 18.4+.
const hasSourceText = (() => {
  let seen: string | undefined
  JSON.parse('1', ((_key: string, value: unknown, context?: ReviverContext) => { seen = context?.source; return value }) as Reviver)
  return seen === '1'
})()

const QUOTED = '\u0000int64:'
// Inside a JSON string every quote is escaped, so `"id":` followed by digits is always a member.
const INT64_MEMBER = /"(id|categoryId)"(\s*:\s*)(-?\d+)/g

/** Parses a response body; int64 fields become bigint, exact. */
export function parseJson (text: string, sourceText = hasSourceText): unknown {
  if (sourceText) return JSON.parse(text, exactReviver as Reviver)
  const quoted = text.replace(INT64_MEMBER, (_match, key: string, colon: string, digits: string) => `"${key}"${colon}"\\u0000int64:${digits}"`)
  return JSON.parse(quoted, exactReviver as Reviver)
}

/** Serializes a request body; bigint values are written as exact integer literals. */
export function stringifyJson (value: unknown): string {
  const text = JSON.stringify(value, (_key, item: unknown) => typeof item === 'bigint' ? QUOTED + item.toString() : item)
  return text.replace(/"\\u0000int64:(-?\d+)"/g, '$1')
}

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/** Accepts a bigint, or a number that is a safe integer; anything else would not be exact. */
export function toInt64 (value: bigint | number, field: string): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new RangeError(`${field} ${value} is not exact as a number; pass a bigint (e.g. ${field}: 9223372036854775807n)`)
  }
  const exact = BigInt(value)
  if (exact < INT64_MIN || exact > INT64_MAX) throw new RangeError(`${field} ${exact} is outside the signed 64-bit range`)
  return exact
}
