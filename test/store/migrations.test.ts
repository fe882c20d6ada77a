import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import { openStore } from '../../src/store/index.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { runCli, runToExit, tempDir } from '../helpers/processes.ts'

/** The migrations on SQLite through postgrator: the table of earlier releases, checksums, a database ahead of the code. */

const MIGRATIONS = loadMigrations('sqlite')
const LATEST = MIGRATIONS.at(-1)!.version
const APPLIED_AT = '2030-01-01T00:00:00.000Z'
const rowsOf = (path: string) => {
  const db = new DatabaseSync(path)
  try {
    return db.prepare('SELECT version, name, applied_at, md5 FROM schema_migrations ORDER BY version').all().map((row) => ({ ...row }))
  } finally {
    db.close()
  }
}

// Migrates the store at DATABASE_URL in a process of its own, and tells whether postgrator was loaded.
const MIGRATE_AND_TELL = `
import { registerHooks } from 'node:module'
const loaded = []
registerHooks({ load (url, context, next) { loaded.push(url); return next(url, context) } })
const { openStore } = await import('./src/store/index.ts')
const store = await openStore(process.env.DATABASE_URL)
const applied = await store.migrate()
await store.close()
console.log(JSON.stringify({ applied, postgrator: loaded.some((url) => url.includes('/node_modules/postgrator/')) }))
`

describe('SQLite migrations', () => {
  test('postgrator is loaded only when there is work for it: not on a database that records every file', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    const migrateAndTell = () => runToExit(['--no-warnings', '--input-type=module', '-e', MIGRATE_AND_TELL], { DATABASE_URL: databaseUrl })
    const names = MIGRATIONS.map(({ version, name }) => `${String(version).padStart(3, '0')}-${name}`)
    assert.deepEqual(await migrateAndTell(), { code: 0, stdout: `${JSON.stringify({ applied: names, postgrator: true })}\n`, stderr: '' })
    assert.deepEqual(await migrateAndTell(), { code: 0, stdout: `${JSON.stringify({ applied: [], postgrator: false })}\n`, stderr: '' })
  })

  test('a database migrated by a release before postgrator opens without re-running anything; its rows stay as they were', async (t) => {
    const path = join(tempDir(t), 'petstore.db')
    // As those releases migrated: their table, every file, one row each.
    const db = new DatabaseSync(path)
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
    for (const { version, name, sql } of MIGRATIONS) {
      db.exec(sql)
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(version, name, APPLIED_AT)
    }
    db.exec("INSERT INTO pets (id, name, category_id) VALUES (9, 'Rex', 7)")
    db.close()

    const store = await openStore(`sqlite:${path}`)
    t.after(() => store.close())
    assert.deepEqual(await store.migrate(), [])
    assert.deepEqual(await store.migrate(), [])
    await store.checkReady()
    assert.deepEqual(store.getPet(9n), { id: 9n, name: 'Rex', categoryId: 7n })
    assert.deepEqual(rowsOf(path), MIGRATIONS.map(({ version, name }) => ({ version, name, applied_at: APPLIED_AT, md5: null })))
  })

  test('a fresh database records each file\'s checksum, and once an applied file differs migrate refuses naming the file and the fix', async (t) => {
    const path = join(tempDir(t), 'petstore.db')
    const store = await openStore(`sqlite:${path}`)
    t.after(() => store.close())
    assert.deepEqual(await store.migrate(), MIGRATIONS.map(({ version, name }) => `${String(version).padStart(3, '0')}-${name}`))
    assert.deepEqual(rowsOf(path).map(({ version, md5 }) => ({ version, md5 })), MIGRATIONS.map(({ version, sql }) => ({ version, md5: createHash('md5').update(sql).digest('hex') })))

    // As if the file of migration 2 had been edited after it was applied.
    const db = new DatabaseSync(path)
    db.exec("UPDATE schema_migrations SET md5 = 'edited' WHERE version = 2")
    db.close()
    const second = MIGRATIONS[1]!
    const refusal = `migration 002-${second.name} was applied to this database from other contents than migrations/sqlite/002.do.${second.name}.sql has now: ` +
      'restore that file as released (a released migration is never edited; a change goes in a new migration)'
    await assert.rejects(store.migrate(), { name: 'ChangedMigrationError', message: refusal })
    assert.deepEqual(await runCli(['migrate'], { DATABASE_URL: `sqlite:${path}` }), { code: 1, stdout: '', stderr: `petstore migrate: ${refusal}\n` })
  })

  test('the server, petstore migrate and keys create refuse a database a later release migrated: one line naming both versions, exit 1', async (t) => {
    const dir = tempDir(t)
    const databaseUrl = `sqlite:${join(dir, 'petstore.db')}`
    assert.equal((await runCli(['migrate'], { DATABASE_URL: databaseUrl })).code, 0)
    const db = new DatabaseSync(join(dir, 'petstore.db'))
    db.prepare("INSERT INTO schema_migrations (version, name, md5, run_at) VALUES (?, 'from-a-later-release', 'x', '2030-01-01 00:00:00')").run(LATEST + 2)
    db.close()

    const refusal = `the database is at migration ${LATEST + 2}, this code knows up to ${LATEST}: run a newer release or restore a backup`
    const server = await runToExit(['src/server.ts'], { PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', DATABASE_URL: databaseUrl })
    assert.deepEqual(server, { code: 1, stdout: '', stderr: `petstore: cannot start: ${refusal}\n` })
    assert.deepEqual(await runCli(['migrate'], { DATABASE_URL: databaseUrl }), { code: 1, stdout: '', stderr: `petstore migrate: ${refusal}\n` })
    assert.deepEqual(await runCli(['keys', 'create', '--name', 'late'], { DATABASE_URL: databaseUrl }), { code: 1, stdout: '', stderr: `petstore keys create: ${refusal}\n` })
    assert.deepEqual(rowsOf(join(dir, 'petstore.db')).length, MIGRATIONS.length + 1, 'nothing applied, nothing removed')
  })
})
