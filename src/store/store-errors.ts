/**
 * The store cannot be reached in time (connection refused, reset, or a timeout). The message
 * names the database and the cause for logs and the CLI; HTTP replies 503 `unavailable`
 * without it. `cause` keeps the driver's error.
 */
export class StoreUnavailableError extends Error {
  override readonly name: string = 'StoreUnavailableError'
}

/**
 * The storage under the store fails (not the code): the disk is full, the file system or
 * database is read-only, or an I/O error. Replied to like an outage (503
 * `unavailable`); when a write meets it, the store reports writes as failing until one succeeds
 * again (see WriteHealth), so it is logged once per change, not once per request.
 */
export class StorageFailureError extends StoreUnavailableError {
  override readonly name = 'StorageFailureError'
}

/** A one-line reason from a driver or network error; AggregateError (IPv4 and IPv6 tried) has no message of its own. */
export function describeCause (error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error instanceof AggregateError && error.errors[0] instanceof Error && !error.message) return describeCause(error.errors[0])
  const code = 'code' in error && typeof error.code === 'string' ? error.code : ''
  return (error.message || code || error.name).split('\n')[0]!
}

/** A URL safe to print: the password is masked. */
export function redactUrl (url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^@/?#]*@/i, '$1:***@')
}

/** DATABASE_URL cannot be used as written. */
export class StoreUrlError extends Error {}
