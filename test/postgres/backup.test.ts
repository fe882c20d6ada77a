import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { size } from '../../src/cli/backup-files.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { freshSchema } from '../helpers/pg-schema.ts'
import { runCli, tempDir } from '../helpers/processes.ts'

const LATEST = loadMigrations('postgres').at(-1)!.version

test('petstore backup on PostgreSQL writes a checked pg_dump of the ?schema= to a 0600 file in a new 0700 folder; restore refuses and names pg_restore', async (t) => {
  const { schema, url } = freshSchema(t)
  const dir = tempDir(t)
  const lines = join(dir, 'pets.jsonl')
  writeFileSync(lines, '{"name":"Dumped","categoryId":1}\n{"name":"Twice","categoryId":2,"status":"sold"}\n')
  assert.equal((await runCli(['pets', 'import', lines], { DATABASE_URL: url })).code, 0)
  assert.equal((await runCli(['keys', 'create', '--name', 'backup test'], { DATABASE_URL: url })).code, 0)

  const file = join(dir, 'backups', 'petstore.dump')
  const backedUp = await runCli(['backup', file], { DATABASE_URL: url })
  assert.deepEqual(backedUp, {
    code: 0,
    stdout: `backed up ${url} to ${file} (${size(statSync(file).size)}, mode 0600, pg_dump custom format): 2 pets, 1 key, migration ${LATEST}; pg_restore --list ok\n`,
    stderr: ''
  })
  assert.deepEqual([(statSync(file).mode & 0o777).toString(8), (statSync(join(dir, 'backups')).mode & 0o777).toString(8)], ['600', '700'])
  assert.deepEqual(readdirSync(join(dir, 'backups')), ['petstore.dump'], 'no partial file is left beside it')
  // The pets' rows, as pg_restore reads them back from the dump: id, name, category_id, status.
  const data = execFileSync('pg_restore', ['--data-only', `--schema=${schema}`, '--table=pets', '--file=-', file], { encoding: 'utf8' })
  assert.deepEqual(/FROM stdin;\n([\s\S]*?)\n\\\./.exec(data)?.[1]?.split('\n'), ['1\tDumped\t1\t\\N', '2\tTwice\t2\tsold'])

  assert.deepEqual(await runCli(['backup', file], { DATABASE_URL: url }), {
    code: 1,
    stdout: '',
    stderr: `petstore backup: ${file} already exists: choose another name, or add --force to replace it\n`
  })
  assert.deepEqual(await runCli(['restore', file], { DATABASE_URL: url }), {
    code: 1,
    stdout: '',
    stderr: 'petstore restore: restore replaces SQLite databases only: on PostgreSQL, stop every instance, drop the schema and run pg_restore, as docs/operations/backups.md "Back up and restore" shows\n'
  })
})
