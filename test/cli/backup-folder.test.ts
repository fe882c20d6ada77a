import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { size } from '../../src/cli/backup-files.ts'
import { writeBackupMetrics } from '../../src/cli/backup-metrics.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { backupMetrics, nameAt, nextSecond, readMetrics, STAMPED_DB } from '../helpers/backup-folder.ts'
import { runCli, tempDir } from '../helpers/processes.ts'

/**
 * petstore backup --dir on SQLite, end to end: the backups a real run keeps and removes among
 * older ones, its metrics file as node_exporter reads it, and a run that fails for real.
 */

const LATEST = loadMigrations('sqlite').at(-1)!.version
const DAY_MS = 86_400_000

/** A migrated database with `pets` pets, made by the CLI alone. */
async function seededDatabase (dir: string, pets: number): Promise<string> {
  const url = `sqlite:${join(dir, 'data', 'petstore.db')}`
  const lines = join(dir, 'pets.jsonl')
  writeFileSync(lines, Array.from({ length: pets }, (_, i) => JSON.stringify({ name: `seed ${i}`, categoryId: i })).join('\n'))
  const imported = await runCli(['pets', 'import', lines], { DATABASE_URL: url })
  assert.equal(imported.code, 0, imported.stderr)
  return url
}

/** Noon and 06:00 UTC of the day `daysAgo` before today: in that day whatever the hour now. */
function olderBackups (daysAgo: number): string[] {
  const day = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - daysAgo * DAY_MS)
  return [nameAt(new Date(day.getTime() + 12 * 3_600_000), 'db'), nameAt(new Date(day.getTime() + 6 * 3_600_000), 'db')]
}

test('backup --dir --keep 3 --keep-daily 4 writes a checked backup named by the time, keeps the newest 3 and the newest of each of the last 4 UTC days, removes the other backups of its own names and nothing else, and writes its metrics file', async (t) => {
  const dir = tempDir(t)
  const url = await seededDatabase(dir, 3)
  const folder = join(dir, 'backups')
  mkdirSync(folder)
  const older = Array.from({ length: 10 }, (_, i) => olderBackups(i + 1))
  for (const name of older.flat()) writeFileSync(join(folder, name), 'an older backup\n')
  const others = ['notes.txt', 'petstore.db', nameAt(new Date(Date.now() - 20 * DAY_MS), 'dump'), 'petstore-20301301T000000Z.db']
  for (const name of others) writeFileSync(join(folder, name), 'not ours to remove\n')
  const metrics = join(dir, 'textfile', 'petstore_backup.prom')
  mkdirSync(join(dir, 'textfile'))

  const before = Date.now()
  const run = await runCli(['backup', '--dir', folder, '--keep', '3', '--keep-daily', '4', '--metrics-file', metrics], { DATABASE_URL: url })
  const after = Date.now()

  const written = readdirSync(folder).filter((name) => STAMPED_DB.test(name) && ![...older.flat(), ...others].includes(name))
  assert.equal(written.length, 1, 'one new backup')
  const newest = written[0]!
  const takenAt = Date.parse(newest.replace(STAMPED_DB, '$1-$2-$3T$4:$5:$6Z'))
  assert.ok(takenAt >= Math.floor(before / 1000) * 1000 && takenAt <= after, `${newest} is named by the time it was taken`)
  const file = join(folder, newest)
  // Kept: the newest 3 (the new one, both of yesterday's) and the newest of the days 2 and 3 ago.
  const kept = [newest, older[0]![0]!, older[0]![1]!, older[1]![0]!, older[2]![0]!]
  const removed = older.flat().filter((name) => !kept.includes(name)).sort()
  assert.deepEqual(run, {
    code: 0,
    stdout: `backed up ${url} to ${file} (${size(statSync(file).size)}, mode 0600): 3 pets, 0 keys, migration ${LATEST}; integrity_check ok; removed ${removed.join(', ')}\n`,
    stderr: ''
  })
  assert.equal(removed.length, 16)
  assert.deepEqual(readdirSync(folder).sort(), [...kept, ...others].sort())
  assert.equal((statSync(file).mode & 0o777).toString(8), '600')

  const values = readMetrics(metrics)
  assert.ok(values.success * 1000 >= takenAt && values.success * 1000 <= after + 1000, 'the success is stamped when the run ended')
  assert.ok(values.duration > 0 && values.duration * 1000 <= after - before, 'the duration is the run\'s')
  assert.equal(readFileSync(metrics, 'utf8'), backupMetrics({ success: values.success, bytes: statSync(file).size, duration: values.duration, failures: 0, lastRun: values.success }))
  assert.equal((statSync(metrics).mode & 0o777).toString(8), '644', 'node_exporter runs as another user')
  assert.deepEqual(readdirSync(join(dir, 'textfile')), ['petstore_backup.prom'], 'no temporary file is left beside it')
})

test('a backup --dir that fails on a database it cannot read leaves the previous backups and no partial file, keeps the last success in the metrics file and counts the failures; the next success, with --json, counts them back to 0', async (t) => {
  const dir = tempDir(t)
  const url = await seededDatabase(dir, 2)
  const database = url.slice('sqlite:'.length)
  const folder = join(dir, 'backups')
  const metrics = join(dir, 'petstore_backup.prom')
  const args = ['backup', '--dir', folder, '--metrics-file', metrics]
  const first = await runCli(args, { DATABASE_URL: url })
  assert.equal(first.code, 0, first.stderr)
  const [good] = readdirSync(folder)
  const goodBytes = statSync(join(folder, good!)).size
  const success = readMetrics(metrics)

  // A damaged disk: the database file no longer holds a SQLite database.
  copyFileSync(database, join(dir, 'petstore.db.saved'))
  for (const suffix of ['-wal', '-shm']) rmSync(database + suffix, { force: true })
  writeFileSync(database, Buffer.alloc(8192, 0x5a))
  for (const failures of [1, 2]) {
    await nextSecond()
    const failed = await runCli(args, { DATABASE_URL: url })
    assert.deepEqual(failed, { code: 1, stdout: '', stderr: `petstore backup: DATABASE_URL ${url} cannot be read: file is not a database; nothing was written\n` })
    assert.deepEqual(readdirSync(folder), [good], 'the previous backup, and no partial file')
    assert.equal(statSync(join(folder, good!)).size, goodBytes)
    const now = readMetrics(metrics)
    assert.ok(now.lastRun > success.lastRun, 'the failed run is stamped')
    assert.equal(readFileSync(metrics, 'utf8'), backupMetrics({ success: success.success, bytes: goodBytes, duration: success.duration, failures, lastRun: now.lastRun }))
  }

  copyFileSync(join(dir, 'petstore.db.saved'), database)
  await nextSecond()
  const again = await runCli([...args, '--json'], { DATABASE_URL: url })
  const newest = readdirSync(folder).find((name) => name !== good)!
  const file = join(folder, newest)
  assert.deepEqual({ ...again, stdout: JSON.parse(again.stdout) }, {
    code: 0,
    stdout: { file, bytes: statSync(file).size, migration: LATEST, pets: 2, keys: 0, database: url, removed: [] },
    stderr: ''
  })
  const recovered = readMetrics(metrics)
  assert.equal(recovered.failures, 0)
  assert.ok(recovered.success > success.success)
  assert.deepEqual(readdirSync(folder).sort(), [good, newest].sort())
})

test('backup refuses command lines that mix FILE and --dir, or give --keep a number it cannot keep, and writes nothing', async (t) => {
  const dir = tempDir(t)
  const url = await seededDatabase(dir, 1)
  const usage = 'Usage: npm run --silent petstore -- backup FILE [--force] [--metrics-file PATH] [--json] | --dir FOLDER [--keep N] [--keep-daily DAYS] [--metrics-file PATH] [--json]\n'
  const refusals: Array<[string[], string]> = [
    [['backup'], 'expected the file to write the backup to, or --dir FOLDER'],
    [['backup', join(dir, 'one.db'), '--dir', join(dir, 'b')], 'give FILE or --dir FOLDER, not both'],
    [['backup', join(dir, 'one.db'), '--keep', '2'], '--keep goes with --dir FOLDER: FILE is one backup, kept until it is replaced'],
    [['backup', '--dir', join(dir, 'b'), '--force'], '--force goes with FILE: with --dir every backup has a name of its own'],
    [['backup', '--dir', join(dir, 'b'), '--keep', '0'], '--keep needs a whole number from 1 to 100000; got "0"'],
    [['backup', '--dir', join(dir, 'b'), '--keep-daily', '-1'], '--keep-daily needs a whole number from 0 to 100000; got "-1"']
  ]
  for (const [args, message] of refusals) {
    assert.deepEqual(await runCli(args, { DATABASE_URL: url }), { code: 2, stdout: '', stderr: `petstore backup: ${message}\n${usage}` }, args.join(' '))
  }
  assert.deepEqual(readdirSync(dir).sort(), ['data', 'pets.jsonl'])
})

test('the metrics file gives its times in whole seconds cut down, as date +%s does: a run late in a second is stamped with that second', (t) => {
  const metrics = join(tempDir(t), 'petstore_backup.prom')
  writeBackupMetrics(metrics, { ok: true, at: new Date('2030-01-31T12:00:00.900Z'), bytes: 4096, seconds: 0.5 })
  const success = Date.parse('2030-01-31T12:00:00Z') / 1000
  assert.equal(readFileSync(metrics, 'utf8'), backupMetrics({ success, bytes: 4096, duration: 0.5, failures: 0, lastRun: success }))
  writeBackupMetrics(metrics, { ok: false, at: new Date('2030-01-31T12:00:01.100Z') })
  assert.equal(readFileSync(metrics, 'utf8'), backupMetrics({ success, bytes: 4096, duration: 0.5, failures: 1, lastRun: success + 1 }))
})
