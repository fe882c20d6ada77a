import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { loadMigrations, migrationLabel } from '../../src/store/migrations.ts'
import { freshSchema, TEST_DATABASE_URL } from '../helpers/pg-schema.ts'
import { runCli } from '../helpers/processes.ts'

/** petstore migrate --status on PostgreSQL (test/cli/migrate-status.test.ts: on SQLite). */

const NAMES = loadMigrations('postgres').map(migrationLabel)
const json = (report: Record<string, unknown>) => JSON.stringify({ current: false, applied: [], pending: [], unknown: [], changed: [], ...report }) + '\n'

async function change (sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

test('petstore migrate --status on PostgreSQL: pending on a new schema without creating it, applied after migrate, unknown and changed rows, exits 3, 0 and 4', async (t) => {
  const { schema, url } = freshSchema(t)
  const env = { DATABASE_URL: url }
  const noTable = 'no migration has been applied: the database has no schema_migrations table (or no file) yet\n'
  assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), {
    code: 3, stdout: json({ pending: NAMES }), stderr: `${noTable}${NAMES.length} pending: "npm run --silent petstore -- migrate" applies them\n`
  })
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  const { rows } = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]).finally(() => client.end())
  assert.deepEqual(rows, [], '--status created the schema')

  assert.equal((await runCli(['migrate'], env)).code, 0)
  assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), { code: 0, stdout: json({ current: true, applied: NAMES }), stderr: '' })
  assert.deepEqual(await runCli(['migrate', '--status'], env), {
    code: 0, stdout: ['state\tmigration\tnote', ...NAMES.map((name) => `applied\t${name}\t`)].join('\n') + '\n', stderr: ''
  })

  await change(`DELETE FROM ${schema}.schema_migrations WHERE version = ${NAMES.length}`)
  assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), {
    code: 3, stdout: json({ applied: NAMES.slice(0, -1), pending: NAMES.slice(-1) }), stderr: '1 pending: "npm run --silent petstore -- migrate" applies them\n'
  })
  const later = `${String(NAMES.length + 1).padStart(3, '0')}-from-a-later-release`
  await change(`INSERT INTO ${schema}.schema_migrations (version, name, md5) VALUES (${NAMES.length + 1}, 'from-a-later-release', 'x');
    UPDATE ${schema}.schema_migrations SET md5 = 'edited' WHERE version = 1`)
  assert.deepEqual(await runCli(['migrate', '--status', '--json'], env), {
    code: 4,
    stdout: json({ applied: NAMES.slice(0, -1), pending: NAMES.slice(-1), unknown: [later], changed: [NAMES[0]] }),
    stderr: 'the database does not match this release\'s migrations: migrate and start-up refuse it (see docs/operations/run.md)\n'
  })
})
