import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { openStore } from '../../src/store/index.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { freshSchema } from '../pg-schema.ts'
import { runCli } from '../processes.ts'

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
