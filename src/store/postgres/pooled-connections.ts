import type pg from 'pg'
import { askTls, createPool, dropsConnection, failureOf, isOutage, NoHostError, outageReason, poolSizes, unavailable, type PostgresOptions, type PostgresTarget } from './pool.ts'
import { NotPrimaryError } from './primary.ts'
import { TlsAnswers } from './tls.ts'
import { PET_INSERT_LOCK } from './writes.ts'
import type { PoolFigures } from '../types.ts'

const WRITABLE_VERSION = "SELECT max(version) AS version, current_setting('transaction_read_only') = 'on' AS read_only FROM schema_migrations"

// pg-pool's words when every connection stayed busy for DATABASE_CONNECT_TIMEOUT_MS.
const waitedForFreeConnection = (error: unknown) => error instanceof Error && error.message === 'timeout exceeded when trying to connect'

/**
 * The store's pooled connections: statements prepared once per connection, transactions, and
 * an outage turned into StoreUnavailableError with the connection dropped.
 */
export class Connections {
  readonly target: PostgresTarget
  readonly #options: PostgresOptions
  readonly pool: pg.Pool
  // The connections statements that may wait for the pet insert lock are limited to (see poolSizes).
  readonly insertPool: pg.Pool
  // Each statement is prepared once per connection, under a name of its own.
  readonly #statementNames = new Map<string, string>()
  readonly #poolSize: number
  // With sslmode=prefer, whether each host offers TLS, for both pools (see askTls).
  readonly #tls = new TlsAnswers()

  constructor (target: PostgresTarget, options: PostgresOptions) {
    this.target = target
    this.#options = options
    const sizes = poolSizes(options)
    this.#poolSize = sizes?.others ?? 1
    this.pool = createPool(target, options, this.#poolSize, this.#tls)
    this.insertPool = sizes ? createPool(target, options, sizes.inserts, this.#tls) : this.pool
  }

  /** pool.connect(), after the next host's reply about TLS when it is not known (sslmode=prefer). */
  #connectAfterTls (pool: pg.Pool): Promise<pg.PoolClient> {
    const asking = askTls(this.target, this.#options, this.#tls)
    return asking ? asking.then(() => pool.connect()) : pool.connect()
  }

  async #connect (pool: pg.Pool): Promise<pg.PoolClient> {
    try {
      return await this.#connectAfterTls(pool)
    } catch (error) {
      if (this.target.hosts.length > 1) return await this.#connectToNextHosts(pool, error)
      throw unavailable(this.target, this.#options, error)
    }
  }

  /**
   * The host the selection named refused or could not be reached, and the selection moved on
   * (see clientClassOf): tries the other hosts in turn, each once, as libpq does. A wait for a
   * free connection that ran out is no host's fault, and is not tried again.
   */
  async #connectToNextHosts (pool: pg.Pool, first: unknown): Promise<pg.PoolClient> {
    const reasons = [outageReason(first, this.#options)]
    let last = first
    while (isOutage(last) && !waitedForFreeConnection(last) && reasons.length < this.target.hosts.length) {
      try {
        return await this.#connectAfterTls(pool)
      } catch (error) {
        reasons.push(outageReason(error, this.#options))
        last = error
      }
    }
    throw unavailable(this.target, this.#options, reasons.length > 1 ? new NoHostError(reasons) : last)
  }

  /** One statement on a pooled connection. Row is the shape of the rows the statement returns. */
  async query<Row extends pg.QueryResultRow = Record<string, never>> (text: string, values: unknown[] = [], pool = this.pool): Promise<pg.QueryResult<Row>> {
    let name = this.#statementNames.get(text)
    if (!name) this.#statementNames.set(text, (name = `petstore_${this.#statementNames.size}`))
    const client = await this.#connect(pool)
    try {
      const result = await client.query<Row>({ name, text, values })
      client.release()
      return result
    } catch (error) {
      client.release(dropsConnection(this.target, error))
      throw failureOf(this.target, this.#options, error)
    }
  }

  /**
   * Whether the connections requests get can write, for readiness with target_session_attrs: a
   * connection checked when it was opened may since have lost its primary (demoted, or turned
   * read-only). Each idle one that cannot write is dropped in turn, so that reads stop going to
   * the old primary too; a new connection goes through the selection, so this ends within the
   * pool's size, with a connection that can write or as an outage. Returns the schema's latest
   * migration, which readiness reads anyway.
   */
  async writableVersion (): Promise<number> {
    for (let dropped = 0; ; dropped++) {
      const client = await this.#connect(this.pool)
      let readOnly: boolean
      let version: number
      try {
        const { rows } = await client.query<{ version: number | null, read_only: boolean }>(WRITABLE_VERSION)
        readOnly = rows[0]!.read_only
        version = Number(rows[0]!.version ?? 0)
      } catch (error) {
        client.release(dropsConnection(this.target, error))
        throw failureOf(this.target, this.#options, error)
      }
      client.release(readOnly)
      if (!readOnly) return version
      if (dropped >= this.#poolSize) throw unavailable(this.target, this.#options, new NotPrimaryError('the connection\'s host no longer takes writes (transaction_read_only is on)'))
    }
  }

  /** Runs work inside BEGIN … COMMIT on one connection of pool; an error rolls it back. */
  async transaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect(pool)
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      client.release()
      return result
    } catch (error) {
      // A connection that broke, or whose ROLLBACK failed, is thrown away rather than reused.
      const rolledBack = !dropsConnection(this.target, error) && await client.query('ROLLBACK').then(() => true, () => false)
      client.release(!rolledBack)
      throw failureOf(this.target, this.#options, error)
    }
  }

  /** A transaction holding the pet insert lock of this schema until it commits. */
  insertTransaction<T> (work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.transaction(this.insertPool, async (client) => {
      await client.query({ name: 'petstore_insert_lock', text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))', values: [PET_INSERT_LOCK, this.target.schema ?? ''] })
      return await work(client)
    })
  }

  /** Each pool's figures now: pg-pool counts them, so reading them costs no request anything. */
  pools (): PoolFigures[] {
    const figures = (pool: pg.Pool, name: PoolFigures['pool']): PoolFigures =>
      ({ pool: name, max: pool.options.max ?? 10, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
    // A pool of one is shared by inserts too (see poolSizes): one pool to report.
    return this.insertPool === this.pool ? [figures(this.pool, 'main')] : [figures(this.pool, 'main'), figures(this.insertPool, 'inserts')]
  }

  async close (): Promise<void> {
    await Promise.all([...new Set([this.pool, this.insertPool])].map((pool) => pool.ended ? undefined : pool.end()))
  }
}
