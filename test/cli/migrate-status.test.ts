import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import { loadMigrations, migrationLabel } from '../../src/store/migrations.ts'
import { runCli, tempDir } from '../helpers/processes.ts'

/** petstore migrate --status on SQLite (test/postgres/migrate-status.test.ts: on PostgreSQL). */

const NAMES = loadMigrations('sqlite').map(migrationLabel)
const LAST = NAMES.at(-1)!
const HEADER = 'state\tmigration\tnote'
const table = (rows: string[][]) => [HEADER, ...rows.map((cells) => cells.join('\t'))].join('\n') + '\n'
const MIGRATE_HINT = (n: number) => `${n} pending: "npm run --silent petstore -- migrate" applies them\n`
const MISMATCH = 'the database does not match this release\'s migrations: migrate and start-up refuse it (see docs/operations/run.md)\n'
const NO_TABLE = 'no migration has been applied: the database has no schema_migrations table (or no file) yet\n'

function change (path: string, sql: string): void {
  const db = new DatabaseSync(path)
  try {
    db.exec(sql)
  } finally {
    db.close()
  }
}

describe('petstore migrate --status on SQLite', () => {
  test('with no database file lists every migration pending, exits 3 and creates no file', async (t) => {
    const path = join(tempDir(t), 'petstore.db')
    const env = { DATABASE_URL: `sqlite:${path}` }
    assert.deepEqual(await runCli(['migrate', '--status'], env), {
      code: 3, stdout: table(NAMES.map((name) => ['pending', name, ''])), stderr: NO_TABLE + MIGRATE_HINT(NAMES.length)
    })
    assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), {
      code: 3,
      stdout: JSON.stringify({ current: false, applied: [], pending: NAMES, unknown: [], changed: [] }) + '\n',
      stderr: NO_TABLE + MIGRATE_HINT(NAMES.length)
    })
    assert.equal(existsSync(path), false)
  })

  test('at the shipped version lists every migration applied and exits 0', async (t) => {
    const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}` }
    assert.equal((await runCli(['migrate'], env)).code, 0)
    assert.deepEqual(await runCli(['migrate', '--status'], env), { code: 0, stdout: table(NAMES.map((name) => ['applied', name, ''])), stderr: '' })
    assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), {
      code: 0, stdout: JSON.stringify({ current: true, applied: NAMES, pending: [], unknown: [], changed: [] }) + '\n', stderr: ''
    })
  })

  test('with the last migration not recorded lists it pending, exits 3, and applies nothing', async (t) => {
    const path = join(tempDir(t), 'petstore.db')
    const env = { DATABASE_URL: `sqlite:${path}` }
    assert.equal((await runCli(['migrate'], env)).code, 0)
    change(path, `DELETE FROM schema_migrations WHERE version = ${NAMES.length}`)
    const rows = [...NAMES.slice(0, -1).map((name) => ['applied', name, '']), ['pending', LAST, '']]
    assert.deepEqual(await runCli(['migrate', '--status'], env), { code: 3, stdout: table(rows), stderr: MIGRATE_HINT(1) })
    assert.deepEqual(await runCli(['migrate', '--status'], env), { code: 3, stdout: table(rows), stderr: MIGRATE_HINT(1) }, 'the first --status applied nothing')
  })

  test('with a migration no shipped file has and one applied from an edited file lists them unknown and changed, exits 4', async (t) => {
    const path = join(tempDir(t), 'petstore.db')
    const env = { DATABASE_URL: `sqlite:${path}` }
    assert.equal((await runCli(['migrate'], env)).code, 0)
    const later = NAMES.length + 1
    change(path, `INSERT INTO schema_migrations (version, name, md5) VALUES (${later}, 'from-a-later-release', 'x');
      UPDATE schema_migrations SET md5 = 'edited' WHERE version = 2`)
    const rows = NAMES.map((name, i) => i === 1 ? ['changed', name, 'applied from other contents than the file has now'] : ['applied', name, ''])
    rows.push(['unknown', `${String(later).padStart(3, '0')}-from-a-later-release`, 'applied, but migrations/sqlite/ has no file of this version'])
    assert.deepEqual(await runCli(['migrate', '--status'], env), { code: 4, stdout: table(rows), stderr: MISMATCH })
    assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), {
      code: 4,
      stdout: JSON.stringify({ current: false, applied: NAMES, pending: [], unknown: [`${String(later).padStart(3, '0')}-from-a-later-release`], changed: [NAMES[1]] }) + '\n',
      stderr: MISMATCH
    })
  })

  test('on a file that is not SQLite exits 1 with one line naming DATABASE_URL and the file', async (t) => {
    const path = join(tempDir(t), 'notes.db')
    writeFileSync(path, 'not a database, just text long enough to be read as a header by SQLite\n'.repeat(20))
    assert.deepEqual(await runCli(['migrate', '--status'], { DATABASE_URL: `sqlite:${path}` }), {
      code: 1, stdout: '', stderr: `petstore migrate: DATABASE_URL sqlite:${path} cannot be read (${resolve(path)}): file is not a database\n`
    })
  })
})
