import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { hashApiKey } from '../../src/auth/api-key.ts'
import { sqlitePath } from '../../src/store/index.ts'
import { buildTestApp, issueKey, json, STORE_KIND, TEST_AUDIT } from '../helpers/app.ts'
import { TEST_DATABASE_URL } from '../helpers/pg-schema.ts'
import { runCli } from '../helpers/processes.ts'

/** Everything the store holds on disk (SQLite: the database, its WAL and shm) or in its tables (pg_dump of the schema). */
function storedBytes (url: string): string {
  if (STORE_KIND === 'sqlite') {
    const file = sqlitePath(url)
    return readdirSync(dirname(file)).map((name) => readFileSync(join(dirname(file), name)).toString('latin1')).join('\n')
  }
  const schema = new URL(url).searchParams.get('schema')!
  const dump = spawnSync('pg_dump', ['--schema', schema, '--no-owner', TEST_DATABASE_URL], { encoding: 'utf8' })
  assert.equal(dump.status, 0, dump.stderr)
  return dump.stdout
}

test(`the store holds no plaintext key, only hashes: keys made by the service and the CLI, after use (${STORE_KIND})`, { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t)
  const second = await issueKey(app.store, 'second')
  const cli = await runCli(['keys', 'create', '--name', 'from-cli'], { DATABASE_URL: app.url })
  assert.equal(cli.code, 0, cli.stderr)
  const fromCli = cli.stdout.trim()
  const keys = [app.key, second.key, fromCli]
  for (const key of keys) {
    const headers = { authorization: `Bearer ${key}`, ...json }
    assert.equal((await app.inject({ method: 'POST', url: '/v1/pets', headers: { ...headers, 'idempotency-key': randomUUID() }, payload: '{"name":"Rex","categoryId":7}' })).statusCode, 201)
    assert.equal((await app.inject({ url: '/v1/pets', headers })).statusCode, 200)
  }
  await app.store.revokeApiKey(second.id, TEST_AUDIT)

  const stored = storedBytes(app.url)
  for (const key of keys) {
    assert.ok(stored.includes(hashApiKey(key)), 'the hash is where the test looks: the search reads the real data')
    assert.ok(!stored.includes(key.slice('psk_'.length)), `the secret of ${key.slice(0, 12)}… is stored in plaintext`)
  }
})
