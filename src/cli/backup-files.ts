import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { loadMigrations } from '../store/migrations.ts'
import type { Dialect } from '../store/types.ts'
import { Failure, UsageError } from './output.ts'

/**
 * How backup and restore put a file in place: written in full under a name of its own beside
 * the target, created 0600 before a byte goes in (a backup holds key hashes: never readable by
 * others, not even for a moment), synced, checked, and only then given the target's name.
 */

const FILE_MODE = 0o600
const DIRECTORY_MODE = 0o700

/** Refuses early what would be refused at the end: an existing FILE without --force, or a folder. */
export function refuseExisting (target: string, force: boolean): void {
  if (!existsSync(target)) return
  if (statSync(target).isDirectory()) throw new UsageError(`${resolve(target)} is a folder: name the file to write`)
  if (!force) throw new Failure(`${resolve(target)} already exists: choose another name, or add --force to replace it`, 'exists')
}

/** An empty 0600 file beside `target` to write into; the folder is made (0700) when missing. */
export function partialFile (target: string): string {
  const folder = dirname(resolve(target))
  try {
    mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE })
    const partial = join(folder, `.${basename(target)}.partial-${randomBytes(4).toString('hex')}`)
    closeSync(openSync(partial, 'wx', FILE_MODE))
    return partial
  } catch (error) {
    throw new Failure(`cannot write in ${folder}: ${messageOf(error)}`, 'cannot_write')
  }
}

/**
 * Gives the written file the target's name, durably. Without `replace` an existing target is
 * kept: link() fails when the name is taken, where rename() would silently replace it.
 */
export function placeFile (partial: string, target: string, replace: boolean): void {
  syncPath(partial, 'r+')
  if (replace) {
    renameSync(partial, target)
  } else {
    try {
      linkSync(partial, target)
    } catch (error) {
      if (codeOf(error) === 'EEXIST') throw new Failure(`${resolve(target)} appeared while this command ran: nothing was replaced`, 'exists')
      throw error
    }
    rmSync(partial)
  }
  syncPath(dirname(resolve(target)), 'r')
}

/** Removes a partial file and what SQLite may have left beside it. */
export function removePartial (partial: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
}

function syncPath (path: string, flags: string): void {
  const fd = openSync(path, flags)
  try { fsyncSync(fd) } finally { closeSync(fd) }
}

/**
 * The tables a database at `migration` holds: those its migrations create, and their ledger.
 * A copy that lacks one is not a petstore database at that version, whatever its integrity.
 */
export function expectedTables (dialect: Dialect, migration: number): string[] {
  const created = loadMigrations(dialect)
    .filter((applied) => applied.version <= migration)
    .flatMap((applied) => [...applied.sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/gi)].map((match) => match[1]!.toLowerCase()))
  return [...new Set([...created, 'schema_migrations'])].sort()
}

/** The newest migration this code knows. */
export const latestMigration = (dialect: Dialect): number => loadMigrations(dialect).at(-1)?.version ?? 0

export const messageOf = (error: unknown): string => error instanceof Error ? error.message : String(error)

export const codeOf = (error: unknown): unknown => error instanceof Error && 'code' in error ? error.code : undefined

/** 53248 → "52 KiB": what an operator compares with df. */
export function size (bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}
