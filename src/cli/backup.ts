import { Command } from 'commander'
import { loadConfig, type Config } from '../config.ts'
import { dialectOf, sqlitePath, type Dialect } from '../store/index.ts'
import { redactUrl } from '../store/store-errors.ts'
import { size } from './backup-files.ts'
import { count, Failure, print, UsageError } from './output.ts'

/** backup and restore: the database of DATABASE_URL to one checked 0600 file, and back. */

interface BackupOptions { force?: boolean, json?: boolean }

type Env = Record<string, string | undefined>

export function backupCommand (env: Env): Command {
  return new Command('backup')
    .description('Write a consistent copy of the database to FILE while the service runs: SQLite\'s online backup, or pg_dump --format=custom --no-owner on PostgreSQL. FILE is created 0600 (its folder 0700 when missing) and checked (integrity, the tables of its migration) before the command reports success. An existing FILE is refused without --force.')
    .usage('FILE [--force] [--json]')
    .argument('[file]')
    .option('--force', 'replace FILE if it exists')
    .option('--json', 'print what was written as JSON')
    .action(async (file: string | undefined, options: BackupOptions) => {
      if (file === undefined) throw new UsageError('expected the file to write the backup to')
      const config = loadConfig(env)
      print(await BACKUPS[dialectOf(config.DATABASE_URL)](file, options, config, env))
    })
}

/** Each store's backup: writes FILE and returns what the command prints. */
const BACKUPS: Record<Dialect, (file: string, options: BackupOptions, config: Config, env: Env) => Promise<string>> = {
  async sqlite (file, options, { DATABASE_URL: url }) {
    const { backupSqlite } = await import('./sqlite-backup.ts')
    const done = await backupSqlite(sqlitePath(url), file, options.force === true)
    return options.json
      ? JSON.stringify({ ...done, database: url })
      : `backed up ${url} to ${done.file} (${size(done.bytes)}, mode 0600): ${count(done.pets, 'pet')}, ${count(done.keys, 'key')}, migration ${done.migration}; integrity_check ok`
  },
  async postgres (file, options, config, env) {
    const { backupPostgres } = await import('./pg-backup.ts')
    const done = await backupPostgres(config.DATABASE_URL, file, options.force === true, config.DATABASE_CONNECT_TIMEOUT_MS, env)
    const where = redactUrl(config.DATABASE_URL)
    return options.json
      ? JSON.stringify({ ...done, database: where })
      : `backed up ${where} to ${done.file} (${size(done.bytes)}, mode 0600, pg_dump custom format): tables ${done.tables.join(', ')}, migration ${done.migration}; pg_restore --list ok`
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
