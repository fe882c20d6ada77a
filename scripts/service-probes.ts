import { Redis } from 'ioredis'
import pg from 'pg'

const PROBE_TIMEOUT_MS = 3000

/** Undefined when PostgreSQL responds to a query; otherwise why not, in one line. */
export async function probePostgres (url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return undefined
  } catch (error) {
    return reason(error)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Undefined when Redis responds to PING; otherwise why not, in one line. */
export async function probeRedis (url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, commandTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null })
  let lastError: unknown
  redis.on('error', (error: unknown) => { lastError = error })
  try {
    await redis.connect()
    await redis.ping()
    return undefined
  } catch (error) {
    return reason(lastError ?? error)
  } finally {
    redis.disconnect()
  }
}

function reason (error: unknown): string {
  if (error instanceof AggregateError && error.errors[0] instanceof Error) return reason(error.errors[0])
  return error instanceof Error ? (error.message || (error as { code?: string }).code || error.name) : String(error)
}
