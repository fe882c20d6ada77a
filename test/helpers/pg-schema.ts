import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import pg from 'pg'

/** The PostgreSQL the tests use; each test works in a schema of its own inside it. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export function randomSchemaName (): string {
  return `petstore_test_${randomBytes(6).toString('hex')}`
}

/** The DATABASE_URL of one schema (created by the first migrate), optionally through another host:port. */
export function schemaUrl (schema: string, via?: { host: string, port: number }): string {
  const url = new URL(TEST_DATABASE_URL)
  url.searchParams.set('schema', schema)
  if (via) {
    url.hostname = via.host
    url.port = String(via.port)
  }
  return url.toString()
}

export async function dropSchema (schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } finally {
    await client.end()
  }
}

/** A fresh schema name and its URL, dropped when the test ends. */
export function freshSchema (t: TestContext): { schema: string, url: string } {
  const schema = randomSchemaName()
  t.after(() => dropSchema(schema))
  return { schema, url: schemaUrl(schema) }
}

/** Where TEST_DATABASE_URL points, for a proxy in front of it. */
export function testDatabaseAddress (): { host: string, port: number } {
  const url = new URL(TEST_DATABASE_URL)
  return { host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) }
}
