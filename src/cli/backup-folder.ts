import { closeSync, fsyncSync, openSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

/**
 * `backup --dir`: a folder of backups named by the UTC second they were taken, and which of
 * them to keep. The name is the record of when: it survives a copy to another disk, where a
 * file's mtime does not, and it sorts in time order.
 */

const STAMPED = /^petstore-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.([a-z]+)$/
const DAY_MS = 86_400_000

/** petstore-20300131T120000Z.db: the backup taken at `at`, with its store's extension. */
export function backupName (at: Date, extension: string): string {
  return `petstore-${at.toISOString().replace(/[-:]|\.\d+/g, '')}.${extension}`
}

/** When the backup of this name was taken; undefined for a name that is not one of ours. */
export function takenAt (name: string, extension: string): Date | undefined {
  const [, year, month, day, hour, minute, second, ext] = STAMPED.exec(name) ?? []
  if (ext !== extension) return undefined
  const at = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`)
  return Number.isNaN(at.getTime()) ? undefined : at
}

/** How many backups to keep: the newest `keep`, and the newest of each UTC day of the last `keepDaily` days (today the first). */
export interface Retention { keep: number, keepDaily: number }

/**
 * The names to remove, among `names`, the folder's files: only our own names, of this store's
 * extension; everything else in the folder is left alone.
 */
export function expired (names: string[], extension: string, now: Date, { keep, keepDaily }: Retention): string[] {
  const ours = names
    .flatMap((name) => { const at = takenAt(name, extension); return at ? [{ name, at }] : [] })
    .sort((a, b) => b.at.getTime() - a.at.getTime())
  const kept = new Set(ours.slice(0, keep).map((backup) => backup.name))
  const today = Math.floor(now.getTime() / DAY_MS)
  const daysSeen = new Set<number>()
  for (const backup of ours) {
    const day = Math.floor(backup.at.getTime() / DAY_MS)
    if (day > today - keepDaily && !daysSeen.has(day)) kept.add(backup.name)
    daysSeen.add(day)
  }
  return ours.filter((backup) => !kept.has(backup.name)).map((backup) => backup.name).sort()
}

/** Removes the expired backups of `folder` and returns their names; the removals made durable. */
export function pruneBackups (folder: string, extension: string, now: Date, retention: Retention): string[] {
  const removed = expired(readdirSync(folder), extension, now, retention)
  for (const name of removed) rmSync(join(folder, name))
  if (removed.length > 0) {
    const fd = openSync(folder, 'r')
    try { fsyncSync(fd) } finally { closeSync(fd) }
  }
  return removed
}
