import { join } from 'node:path'
import { Command } from 'commander'
import { loadConfig, type Config } from '../config.ts'
import { dialectOf, sqlitePath, type Dialect } from '../store/index.ts'
import { redactUrl } from '../store/store-errors.ts'
import { messageOf, size } from './backup-files.ts'
import { backupName, pruneBackups, type Retention } from './backup-folder.ts'
import { writeBackupMetrics } from './backup-metrics.ts'
import { count, Failure, note, print, UsageError } from './output.ts'

/** backup and restore: the database of DATABASE_URL to one checked 0600 file, and back. */

interface BackupOptions { force?: boolean, json?: boolean, dir?: string, keep?: string, keepDaily?: string, metricsFile?: string }

type Env = Record<string, string | undefined>

/** What one store's backup wrote: its size, the line the command prints, and the same as an object for --json. */
interface Written { bytes: number, line: string, object: Record<string, unknown> }

/** The extension of `backup --dir`'s files: what the examples have always named each store's backups. */
const EXTENSIONS: Record<Dialect, string> = { sqlite: 'db', postgres: 'dump' }
const DEFAULT_RETENTION: Retention = { keep: 7, keepDaily: 7 }

export function backupCommand (env: Env): Command {
  return new Command('backup')
    .description('Write a consistent copy of the database to FILE while the service runs: SQLite\'s online backup, or pg_dump --format=custom --no-owner on PostgreSQL. FILE is created 0600 (its folder 0700 when missing) and checked (integrity, the tables of its migration) before the command reports success. An existing FILE is refused without --force. With --dir, the copy is FOLDER/petstore-YYYYMMDDTHHMMSSZ.db (.dump on PostgreSQL), and the older ones beyond --keep and --keep-daily are then removed.')
    .usage('FILE [--force] [--metrics-file PATH] [--json] | --dir FOLDER [--keep N] [--keep-daily DAYS] [--metrics-file PATH] [--json]')
    .argument('[file]')
    .option('--force', 'replace FILE if it exists')
    .option('--dir <FOLDER>', 'write a backup named by the time into FOLDER, then remove its backups beyond --keep and --keep-daily')
    .option('--keep <N>', `with --dir: keep the newest N backups (default ${DEFAULT_RETENTION.keep})`)
    .option('--keep-daily <DAYS>', `with --dir: also keep the newest backup of each UTC day of the last DAYS days, today included (default ${DEFAULT_RETENTION.keepDaily})`)
    .option('--metrics-file <PATH>', 'write the outcome as node_exporter textfile metrics to PATH (a .prom file), replacing it whole')
    .option('--json', 'print what was written as JSON')
    .action(async (file: string | undefined, options: BackupOptions) => {
      const started = new Date()
      try {
        const result = await backupOnce(file, options, env, started)
        print(options.json ? JSON.stringify(result.object) : result.line)
      } catch (error) {
        if (options.metricsFile !== undefined) recordFailure(options.metricsFile)
        throw error
      }
    })
}

/** The failure in the metrics file; a metrics file that cannot be written is noted, and the backup's own failure reported. */
function recordFailure (metricsFile: string): void {
  try {
    writeBackupMetrics(metricsFile, { ok: false, at: new Date() })
  } catch (error) {
    note(`petstore backup: ${messageOf(error)}`)
  }
}

/**
 * One run: the backup, its metrics, then (with --dir) the older backups removed. The metrics
 * come before the removal, so that a backup written and checked is counted as one even if a
 * removal then fails.
 */
async function backupOnce (file: string | undefined, options: BackupOptions, env: Env, started: Date): Promise<Written> {
  const retention = retentionOf(file, options)
  const config = loadConfig(env)
  const dialect = dialectOf(config.DATABASE_URL)
  const target = options.dir === undefined ? file! : join(options.dir, backupName(started, EXTENSIONS[dialect]))
  const written = await BACKUPS[dialect](target, options.force === true, config, env)
  const ended = new Date()
  if (options.metricsFile !== undefined) {
    writeBackupMetrics(options.metricsFile, { ok: true, at: ended, bytes: written.bytes, seconds: (ended.getTime() - started.getTime()) / 1000 })
  }
  if (options.dir === undefined || retention === undefined) return written
  const removed = pruneBackups(options.dir, EXTENSIONS[dialect], started, retention)
  return {
    ...written,
    line: `${written.line}; removed ${removed.length === 0 ? 'no older backup' : removed.join(', ')}`,
    object: { ...written.object, removed }
  }
}

/** The retention of --dir (undefined with FILE), after the refusals of a command line that mixes the two forms. */
function retentionOf (file: string | undefined, options: BackupOptions): Retention | undefined {
  if (file !== undefined && options.dir !== undefined) throw new UsageError('give FILE or --dir FOLDER, not both')
  if (options.dir === undefined) {
    if (file === undefined) throw new UsageError('expected the file to write the backup to, or --dir FOLDER')
    const stray = [['--keep', options.keep], ['--keep-daily', options.keepDaily]].find(([, value]) => value !== undefined)
    if (stray) throw new UsageError(`${stray[0]} goes with --dir FOLDER: FILE is one backup, kept until it is replaced`)
    return undefined
  }
  if (options.force) throw new UsageError('--force goes with FILE: with --dir every backup has a name of its own')
  return {
    keep: wholeNumber('--keep', options.keep, 1) ?? DEFAULT_RETENTION.keep,
    keepDaily: wholeNumber('--keep-daily', options.keepDaily, 0) ?? DEFAULT_RETENTION.keepDaily
  }
}

function wholeNumber (option: string, text: string | undefined, least: number): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || Number(text) < least || Number(text) > 100_000) throw new UsageError(`${option} needs a whole number from ${least} to 100000; got ${JSON.stringify(text)}`)
  return Number(text)
}

/** Each store's backup: writes FILE and returns what it wrote. */
const BACKUPS: Record<Dialect, (file: string, force: boolean, config: Config, env: Env) => Promise<Written>> = {
  async sqlite (file, force, { DATABASE_URL: url }) {
    const { backupSqlite } = await import('./sqlite-backup.ts')
    const done = await backupSqlite(sqlitePath(url), file, force)
    return {
      bytes: done.bytes,
      object: { ...done, database: url },
      line: `backed up ${url} to ${done.file} (${size(done.bytes)}, mode 0600): ${count(done.pets, 'pet')}, ${count(done.keys, 'key')}, migration ${done.migration}; integrity_check ok`
    }
  },
  async postgres (file, force, config, env) {
    const { backupPostgres } = await import('./pg-backup.ts')
    const done = await backupPostgres(config.DATABASE_URL, file, force, config.DATABASE_CONNECT_TIMEOUT_MS, env)
    const where = redactUrl(config.DATABASE_URL)
    return {
      bytes: done.bytes,
      object: { ...done, database: where },
      line: `backed up ${where} to ${done.file} (${size(done.bytes)}, mode 0600, pg_dump custom format): ${count(done.pets, 'pet')}, ${count(done.keys, 'key')}, migration ${done.migration}; pg_restore --list ok`
    }
  }
}

export function restoreCommand (env: Env): Command {
  return new Command('restore')
    .description('Replace the SQLite database with the backup FILE, once it is checked (integrity, the tables of its migration, a migration not ahead of this release). Refused while the service or another command has the database open. The replaced database is kept beside it as DATABASE.before-restore-TIME (0600). On PostgreSQL, stop every instance and use pg_restore: see docs/operations/backups.md.')
    .usage('FILE [--json]')
    .argument('[file]')
    .option('--json', 'print what was restored as JSON')
    .action(async (file: string | undefined, options: BackupOptions) => {
      if (file === undefined) throw new UsageError('expected the backup file to restore')
      const url = loadConfig(env).DATABASE_URL
      print(await RESTORES[dialectOf(url)](url, file, options))
    })
}

/** Each store's restore: replaces the database with FILE and returns what the command prints. */
const RESTORES: Record<Dialect, (url: string, file: string, options: BackupOptions) => Promise<string>> = {
  async sqlite (url, file, options) {
    const { restoreSqlite } = await import('./sqlite-restore.ts')
    const done = await restoreSqlite(sqlitePath(url), file)
    if (options.json) return JSON.stringify({ ...done, database: url })
    const kept = done.keptAt ? `the database it replaced is kept at ${done.keptAt} (mode 0600)` : 'there was no database to keep'
    return `restored ${url} from ${done.file}: ${count(done.pets, 'pet')}, ${count(done.keys, 'key')}, migration ${done.migration}; ${kept}`
  },
  async postgres () {
    // Replacing a schema takes DROP SCHEMA … CASCADE, with every instance, on every host, stopped.
    throw new Failure('restore replaces SQLite databases only: on PostgreSQL, stop every instance, drop the schema and run pg_restore, as docs/operations/backups.md "Back up and restore" shows', 'unsupported')
  }
}
