import pRetry from 'p-retry'
import { PetstoreError } from './errors.ts'

/** When calls are tried again. Only network errors, timed-out attempts, 429 and 503 are retried. */
export interface RetryOptions {
  /** Attempts in all, the first one included. Default 3; 1 turns retries off. */
  attempts?: number
  /** The longest wait before a retry. A Retry-After beyond it is not waited for: the error is thrown. Default 10 000 ms. */
  maxDelayMs?: number
  /** First backoff when the service gives no Retry-After; doubles each time, with jitter. Default 200 ms. */
  baseDelayMs?: number
}

const RETRIED_STATUSES = new Set([429, 503])
// A timed-out attempt is retried like a lost response: every call is a GET or a create carrying its
// Idempotency-Key, so sending it again never does the work twice.
const RETRIED_CODES = new Set<PetstoreError['code']>(['network_error', 'timeout'])

export function retrySettings (options: RetryOptions | false | undefined): Required<RetryOptions> {
  if (options === false) return { attempts: 1, maxDelayMs: 0, baseDelayMs: 0 }
  const settings = { attempts: Math.max(1, Math.ceil(options?.attempts ?? 3)), maxDelayMs: options?.maxDelayMs ?? 10_000, baseDelayMs: options?.baseDelayMs ?? 200 }
  // p-retry refuses these on every call; refused here once, under the names the caller used.
  if (!(settings.maxDelayMs >= 0)) throw new RangeError(`retry.maxDelayMs ${settings.maxDelayMs} is not 0 or more milliseconds`)
  if (!(settings.baseDelayMs >= 0 && settings.baseDelayMs < Infinity)) throw new RangeError(`retry.baseDelayMs ${settings.baseDelayMs} is not a finite 0 or more milliseconds`)
  return settings
}

/** Retry-After as seconds: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function retryAfterSeconds (header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text)
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/**
 * Runs `attempt` again while it fails with a network error, a timeout, 429 or 503 and attempts
 * remain. `attempt` throws PetstoreError only (or the caller's abort reason), so p-retry's own
 * TypeError rule never applies: any rejected fetch is a network error here, whatever the
 * runtime's message. The caller's `signal` also ends a wait between attempts, with its reason.
 */
export function withRetries<T> (settings: Required<RetryOptions>, attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return pRetry(attempt, {
    signal,
    retries: settings.attempts - 1,
    // p-retry's jitter multiplies by a random factor in [1, 2), so starting from half the base
    // keeps each wait between half the backoff and the whole of it.
    minTimeout: settings.baseDelayMs / 2,
    factor: 2,
    randomize: true,
    maxTimeout: settings.maxDelayMs,
    // A Retry-After response is waited for below instead of the backoff, so it takes no backoff step;
    // attemptNumber still bounds the attempts.
    shouldConsumeRetry: ({ error }) => retryAfterOf(error) === undefined,
    async shouldRetry ({ error, attemptNumber }) {
      if (!(error instanceof PetstoreError) || attemptNumber >= settings.attempts) return false
      if (!RETRIED_CODES.has(error.code) && !RETRIED_STATUSES.has(error.status)) return false
      const retryAfter = retryAfterOf(error)
      if (retryAfter === undefined) return true
      if (retryAfter * 1000 > settings.maxDelayMs) return false
      // Cut short by an abort, after which p-retry rejects with the signal's reason.
      await sleep(retryAfter * 1000, signal)
      return true
    }
  })
}

function retryAfterOf (error: Error): number | undefined {
  return error instanceof PetstoreError ? error.retryAfterSeconds : undefined
}

function sleep (ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => { clearTimeout(timer); signal?.removeEventListener('abort', done); resolve() }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
