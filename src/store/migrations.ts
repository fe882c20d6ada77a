import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Migration { version: number, name: string, sql: string }

const MIGRATIONS_ROOT = new URL('../../migrations/', import.meta.url).pathname

/** The versioned SQL files of one dialect, oldest first: migrations/<dialect>/NNN-name.sql. */
export function loadMigrations (dialect: 'sqlite' | 'postgres'): Migration[] {
  const folder = join(MIGRATIONS_ROOT, dialect)
  return readdirSync(folder)
    .filter((file) => /^\d{3}-[a-z0-9-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(join(folder, file), 'utf8')
    }))
}
