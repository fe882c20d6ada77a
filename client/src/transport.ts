import { PetstoreError, type ErrorCode } from './errors.ts'
import { stringifyJson } from './json.ts'
import { retryAfterSeconds, retrySettings, withRetries, type RetryOptions } from './retry.ts'

/** How requests travel: address, key, fetch, retries and the time one attempt may take. */
export interface TransportOptions {
  baseUrl: string
  apiKey: string
  fetch?: typeof globalThis.fetch
  retry?: RetryOptions | false
  timeoutMs?: number
}

/**
 * A successful response, its body already read within the attempt's time: a 2xx, or a 304 to a
 * request that sent If-None-Match (its text empty: the caller has the body it named).
 */
export interface ReceivedResponse { response: Response, text: string }

export interface Request { body?: unknown, headers?: Record<string, string>, signal?: AbortSignal }

export type Send = (method: string, path: string, request?: Request) => Promise<ReceivedResponse>

const DEFAULT_TIMEOUT_MS = 30_000
// The longest delay a timer holds; beyond it, timers fire at once.
const MAX_TIMEOUT_MS = 2 ** 31 - 1

export function createTransport (options: TransportOptions): Send {
  const base = new URL(options.baseUrl.replace(/\/+$/, '') + '/')
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
  const retry = retrySettings(options.retry)
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!(timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) throw new RangeError(`timeoutMs ${timeoutMs} is not a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`)

  return async function send (method, path, request = {}) {
    const url = new URL(path, base)
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${options.apiKey}`, ...request.headers }
    if (request.body !== undefined) headers['content-type'] = 'application/json'
    const body = request.body === undefined ? undefined : stringifyJson(request.body)
    const caller = request.signal
    const conditional = headers['if-none-match'] !== undefined
    // Each attempt has its own timeout, covering the response's body as well as its headers.
    async function attempt (): Promise<ReceivedResponse> {
      const timeout = AbortSignal.timeout(Math.ceil(timeoutMs))
      try {
        const response = await fetchImpl(url, { method, headers, body, signal: caller ? AbortSignal.any([caller, timeout]) : timeout })
        const text = await response.text()
        if (response.ok || (response.status === 304 && conditional)) return { response, text }
        throw errorOf(response, text)
      } catch (error) {
        if (error instanceof PetstoreError) throw error
        if (caller?.aborted) throw caller.reason
        if (timeout.aborted) throw new PetstoreError({ status: 0, code: 'timeout', message: `${method} ${url.pathname} got no response within ${timeoutMs} ms`, cause: error })
        throw new PetstoreError({ status: 0, code: 'network_error', message: `${method} ${url.pathname} got no response: ${(error as Error).message}`, cause: error })
      }
    }
    // Every call is a GET or a createPet carrying its Idempotency-Key, so each is safe to send again.
    return withRetries(retry, attempt, caller)
  }
}

function errorOf (response: Response, text: string): PetstoreError {
  const requestId = response.headers.get('x-request-id') ?? undefined
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'))
  let body: { code?: unknown, message?: unknown, details?: unknown } | undefined
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (typeof body?.code === 'string' && typeof body.message === 'string') {
    return new PetstoreError({
      status: response.status,
      code: body.code as ErrorCode,
      message: body.message,
      requestId,
      details: Array.isArray(body.details) ? body.details : undefined,
      retryAfterSeconds: retryAfter
    })
  }
  // A 304 can only answer If-None-Match; to a request without one it names no body the client has.
  const message = response.status === 304 ? 'HTTP 304 Not Modified to a request that named no ETag' : `HTTP ${response.status} without an Error body`
  return new PetstoreError({ status: response.status, code: 'unexpected_response', message, requestId, retryAfterSeconds: retryAfter })
}
