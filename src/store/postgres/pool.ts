import pg from 'pg'
import { describeCause, StorageFailureError, StoreUnavailableError } from '../store-errors.ts'
import { askTlsOfNextHost, clientClassOf, NotPrimaryError } from './primary.ts'
import { TlsAnswers } from './tls.ts'
import type { PostgresTarget } from './url.ts'

/** Pool bounds and timeouts: DATABASE_POOL_MAX, DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_MS. */
export interface PostgresOptions {
  poolMax?: number
  statementTimeoutMs?: number
  connectTimeoutMs?: number
}

export { parsePostgresUrl, type PostgresTarget } from './url.ts'

// int8 stays the text PostgreSQL sends, whatever a global type parser says; the adapter
// turns it into a bigint itself, so no id or categoryId ever passes through a double.
const INT8_OID = 20
const keepInt8Text = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (text: string) => text : pg.types.getTypeParser(oid, format)
}

// The client gives up reading a little after the server's own statement_timeout would have
// responded, so a connection that went silent (a network partition) cannot hang a request.
const READ_TIMEOUT_MARGIN_MS = 1000

const connectTimeoutOf = (options: PostgresOptions) => options.connectTimeoutMs ?? 2000

function connectionConfig (target: PostgresTarget, options: PostgresOptions): pg.ClientConfig {
  return {
    connectionString: target.connectionString,
    // In a pool this also bounds the wait for a free connection when all are busy.
    connectionTimeoutMillis: connectTimeoutOf(options),
    keepAlive: true,
    options: target.schema ? `-c search_path=${target.schema}` : undefined,
    types: keepInt8Text
  }
}

/**
 * How DATABASE_POOL_MAX connections are shared. Every pet insert waits for one lock (see
 * writes.ts): while another instance holds it, inserts would hold every connection they got,
 * and reads would wait for one. So the statements that can wait behind that lock (pet inserts,
 * and the purge, whose rows an insert may hold) get at most a quarter of the connections,
 * rounded up; reads and the rest always have the others. A pool of one has nothing to share.
 */
export function poolSizes (options: PostgresOptions): { others: number, inserts: number } | undefined {
  const max = options.poolMax ?? 10
  if (max < 2) return undefined
  const inserts = Math.ceil(max / 4)
  return { others: max - inserts, inserts }
}

// The statement that was running gets the same error, and reports it.
function ignoreClientError (): void {}

/**
 * With sslmode=prefer, what to await before pool.connect() or a new client's connect(): the
 * reply of the next host to whether it offers TLS, unless tls knows it (see askTlsOfNextHost).
 */
export function askTls (target: PostgresTarget, options: PostgresOptions, tls: TlsAnswers): Promise<void> | undefined {
  return askTlsOfNextHost(target, tls, connectTimeoutOf(options))
}

/** A pool of at most `max` connections: every wait on it bounded in time. */
export function createPool (target: PostgresTarget, options: PostgresOptions, max: number, tls = new TlsAnswers()): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? 5000
  const pool = new pg.Pool({
    ...connectionConfig(target, options),
    // With target_session_attrs, each new connection is checked; with sslmode=prefer, it is
    // plain text when its host replied to askTls that it has no TLS (see clientClassOf).
    Client: clientClassOf(target, tls),
    max,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + READ_TIMEOUT_MARGIN_MS,
    idle_in_transaction_session_timeout: statementTimeout * 2
  })
  // An idle connection that breaks is dropped by the pool; the next request reports the outage.
  pool.on('error', () => {})
  // A connection that breaks while a request holds it fails that request's statement (an
  // outage: 503), and Connections releases it with the error, so the pool throws it away. The
  // client also emits 'error', and the pool listens only while the connection is idle: without
  // a listener of its own, that event would end the process. Added once per connection.
  pool.on('connect', (client) => { client.on('error', ignoreClientError) })
  return pool
}

/**
 * A connection of its own for migrations, without the statement timeout: it may wait for
 * another instance's migration lock and run long DDL.
 */
export function createMigrationClient (target: PostgresTarget, options: PostgresOptions, tls = new TlsAnswers()): pg.Client {
  const client = new (clientClassOf(target, tls))(connectionConfig(target, options))
  client.on('error', () => {})
  return client
}

/**
 * A connected migration client. With several hosts, each refused or unreachable host moves the
 * selection on (see clientClassOf) and the next is tried, once each: as libpq does, at most
 * DATABASE_CONNECT_TIMEOUT_MS per host. With sslmode=prefer, each host tried is first asked
 * whether it offers TLS (see askTls).
 */
export async function connectClient (target: PostgresTarget, options: PostgresOptions): Promise<pg.Client> {
  const reasons: string[] = []
  const tls = new TlsAnswers()
  for (;;) {
    try {
      await askTls(target, options, tls)
      const client = createMigrationClient(target, options, tls)
      await client.connect()
      return client
    } catch (error) {
      reasons.push(outageReason(error, options))
      if (reasons.length >= target.hosts.length) throw unavailable(target, options, reasons.length > 1 ? new NoHostError(reasons) : error)
    }
  }
}

/** Every host of the URL was tried and none took writes; the message has each one's reason. */
export class NoHostError extends Error {
  override readonly name = 'NoHostError'
  constructor (reasons: string[]) {
    super(`no host takes writes: ${reasons.join('; ')}`)
  }
}

/**
 * Whether an error means the database could not be reached or did not respond in time, as
 * opposed to a query the database refused. SQLSTATE classes: 08 connection exception,
 * 53 insufficient resources, 57 operator intervention (57014: statement timeout).
 * An error without a SQLSTATE comes from the driver or the network.
 */
// The driver's words for its own timeouts, told in terms of the settings that bound them.
const CONNECT_TIMEOUT_MESSAGES = new Set(['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout', 'timeout expired'])
const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error|Client was closed|Query read timeout)/

/**
 * An outage is the database or the way to it failing, not a bug: SQLSTATE classes 08
 * (connection), 53 (resources) and 57 (operator intervention), network errors and the
 * driver's own timeouts. Anything else (a TypeError, a constraint) stays an error of ours.
 */
export function isOutage (error: unknown): boolean {
  if (error instanceof NotPrimaryError || error instanceof NoHostError) return true
  if (error instanceof pg.DatabaseError) return /^(08|53|57)/.test(error.code ?? '')
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' && NETWORK_ERROR_CODES.has(error.code)) return true
  const message = error instanceof Error ? error.message : ''
  return CONNECT_TIMEOUT_MESSAGES.has(message) || LOST_CONNECTION.test(message)
}

// SQLSTATEs of a storage that cannot take a write: disk_full, read_only_sql_transaction (a
// standby, or a database set read-only), io_error.
const STORAGE_FAILURE_CODES = new Set(['53100', '25006', '58030'])

/** read_only_sql_transaction: the session cannot write. */
function isReadOnly (error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError && error.code === '25006'
}

/**
 * Whether a connection that failed with error must be thrown away rather than reused: it broke,
 * or (with target_session_attrs) its host no longer takes writes, having been demoted or turned
 * read-only since the connection was checked. A new connection then goes through the selection.
 */
export function dropsConnection (target: PostgresTarget, error: unknown): boolean {
  return isOutage(error) || (target.sessionAttrs !== undefined && isReadOnly(error))
}

/** The server's reason when error is a failure of its storage rather than a bug; undefined otherwise. */
export function storageFailure (error: unknown): string | undefined {
  return error instanceof pg.DatabaseError && STORAGE_FAILURE_CODES.has(error.code ?? '') ? error.message : undefined
}

/** lock_timeout ran out (SQLSTATE 55P03): another transaction held the row for too long. */
export function isLockTimeout (error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code === '55P03'
}

export function outageReason (error: unknown, options: PostgresOptions): string {
  const cause = describeCause(error)
  if (CONNECT_TIMEOUT_MESSAGES.has(cause)) return `no connection within ${options.connectTimeoutMs ?? 2000} ms (DATABASE_CONNECT_TIMEOUT_MS)`
  if (cause === 'Query read timeout') return `no response within ${(options.statementTimeoutMs ?? 5000) + READ_TIMEOUT_MARGIN_MS} ms (DATABASE_STATEMENT_TIMEOUT_MS)`
  return cause
}

export function unavailable (target: PostgresTarget, options: PostgresOptions, error: unknown): StoreUnavailableError {
  return new StoreUnavailableError(`PostgreSQL at ${target.where} is unavailable: ${outageReason(error, options)}`, { cause: error })
}

/** What a failed statement is thrown as: a storage failure, an outage, or the error itself (a bug of ours). */
export function failureOf (target: PostgresTarget, options: PostgresOptions, error: unknown): unknown {
  // With target_session_attrs, read-only means this host is not the primary (any more): an
  // outage that the next connection's selection ends, not a storage failure. With
  // one host and no target_session_attrs, it stays a database set read-only (below).
  if (target.sessionAttrs !== undefined && isReadOnly(error)) {
    return new StoreUnavailableError(`PostgreSQL at ${target.where} is unavailable: the connection's host no longer takes writes: ${error.message}`, { cause: error })
  }
  const reason = storageFailure(error)
  if (reason !== undefined) return new StorageFailureError(`PostgreSQL at ${target.where} cannot write: ${reason}`, { cause: error })
  return isOutage(error) ? unavailable(target, options, error) : error
}
