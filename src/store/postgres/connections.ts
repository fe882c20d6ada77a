import type pg from 'pg'
import { createPool, failureOf, isOutage, poolSizes, unavailable, type PostgresOptions, type PostgresTarget } from './pool.ts'
import { PET_INSERT_LOCK } from './writes.ts'

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

  constructor (target: PostgresTarget, options: PostgresOptions) {
    this.target = target
    this.#options = options
    const sizes = poolSizes(options)
    this.pool = createPool(target, options, sizes?.others ?? 1)
    this.insertPool = sizes ? createPool(target, options, sizes.inserts) : this.pool
  }

  async #connect (pool: pg.Pool): Promise<pg.PoolClient> {
    try {
      return await pool.connect()
    } catch (error) {
      throw unavailable(this.target, this.#options, error)
    }
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
      client.release(isOutage(error))
      throw failureOf(this.target, this.#options, error)
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
      const rolledBack = !isOutage(error) && await client.query('ROLLBACK').then(() => true, () => false)
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

  async close (): Promise<void> {
    await Promise.all([...new Set([this.pool, this.insertPool])].map((pool) => pool.ended ? undefined : pool.end()))
  }
}
