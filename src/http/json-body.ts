import { ApiError, invalidRequest } from './errors.ts'

/**
 * JSON.parse turns 9223372036854775807 into 9223372036854775808: a double cannot hold it.
 * The parser keeps the source text of every number beside the parsed value (Node 24's
 * reviver context), so int64 fields are read exactly after validation.
 */
const numberSources = new WeakMap<object, Map<string, string>>()

interface ReviverContext { source?: string }

function reviver (this: object, key: string, value: unknown, context?: ReviverContext): unknown {
  if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) {
    throw invalidRequest('The request body contains a forbidden property name (__proto__ or constructor.prototype).')
  }
  if (typeof value === 'number' && context?.source !== undefined) {
    let sources = numberSources.get(this)
    if (!sources) numberSources.set(this, (sources = new Map()))
    sources.set(key, context.source)
  }
  return value
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i

/** JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread, so it is refused. */
export function assertUtf8 (contentType: string | undefined): void {
  const charset = contentType === undefined ? undefined : CHARSET.exec(contentType)?.[1]
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ApiError('unsupported_media_type', `The request body must be UTF-8 JSON; charset=${charset} is not supported.`)
  }
}

type Reviver = (this: unknown, key: string, value: unknown) => unknown

export function parseJsonBody (text: string): unknown {
  if (text.trim() === '') throw invalidRequest('The request body is empty; a JSON object is required.')
  try {
    return JSON.parse(text, reviver as Reviver)
  } catch (error) {
    if (error instanceof SyntaxError) throw invalidRequest(`The request body is not valid JSON: ${error.message}`)
    // Thousands of nested arrays fit in 16 KiB and overflow the stack of the reviver.
    if (error instanceof RangeError) throw invalidRequest('The request body is nested too deeply.')
    throw error
  }
}

/** The literal text a number field was written with, e.g. "9223372036854775807" or "1e3". */
export function numberSource (holder: object, key: string): string | undefined {
  return numberSources.get(holder)?.get(key)
}
