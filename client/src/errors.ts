import type { components } from './generated/openapi.ts'

export type ErrorCode = components['schemas']['Error']['code']
export type ErrorDetail = NonNullable<components['schemas']['Error']['details']>[number]

/**
 * Every failure of a call: an Error body from the service (code and message as sent), an
 * response that is not one (code `unexpected_response`), no response at all (status 0, code
 * `network_error`, the fetch error as `cause`), or none within `timeoutMs` (status 0, code
 * `timeout`). A call the caller aborts rejects with the signal's reason instead.
 */
export class PetstoreError extends Error {
  override readonly name = 'PetstoreError'
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number
  readonly code: ErrorCode | 'unexpected_response' | 'network_error' | 'timeout'
  /** The X-Request-Id of the failed response: quote it when reporting a problem. */
  readonly requestId: string | undefined
  readonly details: ErrorDetail[] | undefined
  /** Seconds the service asked to wait (Retry-After), on 429 and 503. */
  readonly retryAfterSeconds: number | undefined

  constructor (init: {
    status: number
    code: PetstoreError['code']
    message: string
    requestId?: string
    details?: ErrorDetail[]
    retryAfterSeconds?: number
    cause?: unknown
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.status = init.status
    this.code = init.code
    this.requestId = init.requestId
    this.details = init.details
    this.retryAfterSeconds = init.retryAfterSeconds
  }
}
