import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { size } from '../../src/cli/backup-files.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { backupMetrics, nameAt, nextSecond, readMetrics } from '../helpers/backup-folder.ts'
import { freshSchema } from '../helpers/pg-schema.ts'
import { runCli, tempDir } from '../helpers/processes.ts'

const LATEST = loadMigrations('postgres').at(-1)!.version

test('backup --dir on PostgreSQL writes a checked dump named by the time, removes the older dumps past --keep 1 --keep-daily 0 and nothing else, and writes its metrics file; a run that cannot connect leaves them and counts the failure', async (t) => {
  const { url } = freshSchema(t)
  const dir = tempDir(t)
  const lines = join(dir, 'pets.jsonl')
  writeFileSync(lines, '{"name":"Dumped","categoryId":1}\n')
  assert.equal((await runCli(['pets', 'import', lines], { DATABASE_URL: url })).code, 0)
  const folder = join(dir, 'backups')
  mkdirSync(folder)
  const older = nameAt(new Date(Date.now() - 86_400_000), 'dump')
  const sqliteBackup = nameAt(new Date(Date.now() - 86_400_000), 'db')
  for (const name of [older, sqliteBackup]) writeFileSync(join(folder, name), 'an older backup\n')
  const metrics = join(dir, 'petstore_backup.prom')
  const args = ['backup', '--dir', folder, '--keep', '1', '--keep-daily', '0', '--metrics-file', metrics]

  const run = await runCli(args, { DATABASE_URL: url })
  const newest = readdirSync(folder).find((name) => name !== older && name !== sqliteBackup)!
  const file = join(folder, newest)
  assert.deepEqual(run, {
    code: 0,
    stdout: `backed up ${url} to ${file} (${size(statSync(file).size)}, mode 0600, pg_dump custom format): 1 pet, 0 keys, migration ${LATEST}; pg_restore --list ok; removed ${older}\n`,
    stderr: ''
  })
  assert.match(newest, /^petstore-\d{8}T\d{6}Z\.dump$/)
  assert.deepEqual(readdirSync(folder).sort(), [newest, sqliteBackup].sort(), 'the SQLite backup is not one of its own')
  const success = readMetrics(metrics)
  assert.equal(readFileSync(metrics, 'utf8'), backupMetrics({ ...success, bytes: statSync(file).size, failures: 0, lastRun: success.success }))

  await nextSecond()
  // A server that refuses connections: the port of nothing listening.
  const unreachable = new URL(url)
  unreachable.port = '1'
  const failed = await runCli(args, { DATABASE_URL: unreachable.toString() })
  assert.deepEqual(failed, {
    code: 1,
    stdout: '',
    stderr: `petstore backup: pg_dump failed (exit 1): pg_dump: error: connection to server at "${unreachable.hostname}", port 1 failed: Connection refused Is the server running on that host and accepting TCP/IP connections?\n`
  })
  assert.deepEqual(readdirSync(folder).sort(), [newest, sqliteBackup].sort(), 'the previous dump, and no partial file')
  const after = readMetrics(metrics)
  assert.ok(after.lastRun > success.lastRun)
  assert.equal(readFileSync(metrics, 'utf8'), backupMetrics({ ...success, failures: 1, lastRun: after.lastRun }))
})
