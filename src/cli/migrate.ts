import { Command } from 'commander'
import { loadConfig } from '../config.ts'
import { dialectOf, poolOptions, type Dialect } from '../store/index.ts'
import { compareMigrations, isCurrent, loadMigrations, migrationLabel, readAppliedMigrations, type MigrationReport } from '../store/migrations.ts'
import { note, print, printRow, StatusExit } from './output.ts'
import type { CommandStore } from './command-store.ts'

/**
 * migrate, and migrate --status: which migrations the database has against the files this
 * release ships, read without changing anything, so a deploy can look before it migrates.
 * Exit codes of --status: 0 at the shipped version, 3 migrations pending (migrate applies them),
 * 4 the database does not match the shipped files (unknown or changed migrations: migrate and
 * start-up refuse it), 1 the database could not be read.
 */

export const PENDING_EXIT = 3
export const MISMATCH_EXIT = 4

export function migrateCommand (store: CommandStore, env: Record<string, string | undefined>): Command {
  return new Command('migrate')
    .description(`Apply pending database migrations, then exit. With --status, apply nothing: list the migrations applied, pending, unknown (applied, but not shipped with this release) and changed (applied from a file edited since); exit 0 at the shipped version, ${PENDING_EXIT} when migrations are pending, ${MISMATCH_EXIT} when any is unknown or changed.`)
    .usage('[--status] [--json]')
    .option('--status', 'show where the database is, change nothing')
    .option('--json', 'print {"applied": [names]}; with --status {"current", "applied", "pending", "unknown", "changed"}')
    .action(async (options: { status?: boolean, json?: boolean }) => {
      if (options.status) return status(env, options.json === true)
      const applied = await (await store.open()).migrate()
      print(options.json ? JSON.stringify({ applied }) : applied.length ? `applied ${applied.join(', ')}` : 'up to date')
    })
}

async function status (env: Record<string, string | undefined>, json: boolean): Promise<void> {
  const config = loadConfig(env)
  const dialect = dialectOf(config.DATABASE_URL)
  const rows = await readAppliedMigrations(config.DATABASE_URL, poolOptions(config))
  const report = compareMigrations(loadMigrations(dialect), rows ?? [])
  if (json) printJson(report)
  else printTable(report, dialect)
  if (rows === undefined) note('no migration has been applied: the database has no schema_migrations table (or no file) yet')
  const exit = report.unknown.length + report.changed.length > 0 ? MISMATCH_EXIT : report.pending.length > 0 ? PENDING_EXIT : 0
  if (exit === PENDING_EXIT) note(`${report.pending.length} pending: "npm run --silent petstore -- migrate" applies them`)
  if (exit === MISMATCH_EXIT) note('the database does not match this release\'s migrations: migrate and start-up refuse it (see docs/operations/run.md)')
  if (exit !== 0) throw new StatusExit(exit)
}

function printJson (report: MigrationReport): void {
  print(JSON.stringify({
    current: isCurrent(report),
    applied: report.applied.map(migrationLabel),
    pending: report.pending.map(migrationLabel),
    unknown: report.unknown.map(migrationLabel),
    changed: report.changed.map(migrationLabel)
  }))
}

/** One row per migration, in version order: state, NNN-name, and what to know about it. */
function printTable (report: MigrationReport, dialect: Dialect): void {
  const changed = new Set(report.changed.map(({ version }) => version))
  const row = (state: string, migration: { version: number, name: string }, note = '') => ({ version: migration.version, cells: [state, migrationLabel(migration), note] })
  const rows = [
    ...report.applied.map((migration) => changed.has(migration.version)
      ? row('changed', migration, 'applied from other contents than the file has now')
      : row('applied', migration)),
    ...report.pending.map((migration) => row('pending', migration)),
    ...report.unknown.map((migration) => row('unknown', migration, `applied, but migrations/${dialect}/ has no file of this version`))
  ]
  printRow(['state', 'migration', 'note'])
  for (const { cells } of rows.sort((a, b) => a.version - b.version)) printRow(cells)
}
