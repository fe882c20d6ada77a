/** When calls are tried again. Only network errors, 429 and 503 are retried. */
export interface RetryOptions {
  /** Attempts in all, the first one included. Default 3; 1 turns retries off. */
  attempts?: number
  /** The longest wait before a retry. A Retry-After beyond it is not waited for: the error is thrown. Default 10 000 ms. */
  maxDelayMs?: number
  /** First backoff when the service gives no Retry-After; doubles each time, with jitter. Default 200 ms. */
  baseDelayMs?: number
}

export const RETRIED_STATUSES = new Set([429, 503])

export function retrySettings (options: RetryOptions | false | undefined): Required<RetryOptions> {
  if (options === false) return { attempts: 1, maxDelayMs: 0, baseDelayMs: 0 }
  return { attempts: Math.max(1, options?.attempts ?? 3), maxDelayMs: options?.maxDelayMs ?? 10_000, baseDelayMs: options?.baseDelayMs ?? 200 }
}

/** Retry-After as seconds: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function retryAfterSeconds (header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text)
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** How long to wait before attempt number `attempt + 1`, or undefined when not to retry. */
export function retryDelayMs (settings: Required<RetryOptions>, attempt: number, retryAfter: number | undefined): number | undefined {
  if (attempt >= settings.attempts) return undefined
  if (retryAfter !== undefined) {
    const wait = retryAfter * 1000
    return wait <= settings.maxDelayMs ? wait : undefined
  }
  const backoff = settings.baseDelayMs * 2 ** (attempt - 1)
  return Math.min(settings.maxDelayMs, backoff / 2 + Math.random() * backoff / 2)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => { setTimeout(resolve, ms) })
