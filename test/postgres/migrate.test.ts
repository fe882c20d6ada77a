import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { openStore } from '../../src/store/index.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { freshSchema } from '../helpers/pg-schema.ts'
import { runCli, runToExit } from '../helpers/processes.ts'

const ALL = loadMigrations('postgres').map((m) => `${String(m.version).padStart(3, '0')}-${m.name}`)

async function appliedVersions (url: string): Promise<Array<{ version: number, name: string }>> {
  const store = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await store.connect()
  try {
    const schema = new URL(url).searchParams.get('schema')
    const { rows } = await store.query(`SELECT version, name FROM ${schema}.schema_migrations ORDER BY version`)
    return rows
  } finally {
    await store.end()
  }
}

test('migrations started by several instances at once on a fresh schema are applied exactly once', async (t) => {
  const { url } = freshSchema(t)
  // Each store has its own pool, so each migrate runs on its own connection, as separate processes would.
  const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(url)))
  t.after(() => Promise.all(stores.map((store) => store.close())))

  const results = await Promise.all(stores.map((store) => store.migrate()))

  assert.deepEqual(results.filter((applied) => applied.length > 0), [ALL])
  assert.equal(results.filter((applied) => applied.length === 0).length, 3)
  assert.deepEqual(await appliedVersions(url), loadMigrations('postgres').map(({ version, name }) => ({ version, name })))
  for (const store of stores) await store.checkReady()
})

test('petstore migrate applies the migrations on PostgreSQL once, then reports up to date', async (t) => {
  const { url } = freshSchema(t)
  assert.deepEqual(await runCli(['migrate', '--json'], { DATABASE_URL: url }), { code: 0, stdout: JSON.stringify({ applied: ALL }) + '\n', stderr: '' })
  assert.deepEqual(await runCli(['migrate'], { DATABASE_URL: url }), { code: 0, stdout: 'up to date\n', stderr: '' })
})

test('a store on a schema that is not migrated is not ready', async (t) => {
  const { url } = freshSchema(t)
  const store = await openStore(url)
  t.after(() => store.close())
  await assert.rejects(store.checkReady())
  await store.migrate()
  await store.checkReady()
})

test('a schema migrated by a release before postgrator opens without re-running anything; its rows stay as they were', async (t) => {
  const { schema, url } = freshSchema(t)
  // As those releases migrated: their table, every file, one row each.
  const client = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await client.connect()
  try {
    await client.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}`)
    await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)')
    for (const { version, name, sql } of loadMigrations('postgres')) {
      await client.query(sql)
      await client.query("INSERT INTO schema_migrations VALUES ($1, $2, '2030-01-01T00:00:00Z')", [version, name])
    }
    await client.query("INSERT INTO pets (name, category_id) VALUES ('Rex', 7)")
  } finally {
    await client.end()
  }

  const store = await openStore(url)
  t.after(() => store.close())
  assert.deepEqual(await store.migrate(), [])
  assert.deepEqual(await store.migrate(), [])
  await store.checkReady()
  assert.deepEqual((await store.listPets({ limit: 10 })).map((pet) => pet.name), ['Rex'])
  assert.deepEqual(await appliedVersions(url), loadMigrations('postgres').map(({ version, name }) => ({ version, name })))
})

test('the server and petstore migrate refuse a schema a later release migrated: one line naming both versions, exit 1', async (t) => {
  const { schema, url } = freshSchema(t)
  const latest = loadMigrations('postgres').at(-1)!.version
  assert.equal((await runCli(['migrate'], { DATABASE_URL: url })).code, 0)
  const client = new pg.Client({ connectionString: url.replace(/\?.*$/, '') })
  await client.connect()
  await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, 'from-a-later-release')`, [latest + 1]).finally(() => client.end())

  const refusal = `the database is at migration ${latest + 1}, this code knows up to ${latest}: run a newer release or restore a backup`
  const server = await runToExit(['src/server.ts'], { PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', DATABASE_URL: url })
  assert.deepEqual(server, { code: 1, stdout: '', stderr: `petstore: cannot start: ${refusal}\n` })
  assert.deepEqual(await runCli(['migrate'], { DATABASE_URL: url }), { code: 1, stdout: '', stderr: `petstore migrate: ${refusal}\n` })
  assert.equal((await appliedVersions(url)).length, loadMigrations('postgres').length + 1, 'nothing applied, nothing removed')
})
