import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/** What `backup --dir` and `--metrics-file` write, spelled out here so the tests compare with them. */

/** petstore-YYYYMMDDTHHMMSSZ.db, its six parts captured. */
export const STAMPED_DB = /^petstore-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.db$/

/** The name a backup taken at `at` has. */
export function nameAt (at: Date, extension: string): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `petstore-${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}T${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${pad(at.getUTCSeconds())}Z.${extension}`
}

/** Backups are named by the second: the next run waits for a second of its own. */
export async function nextSecond (): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 5)
}

export interface BackupMetricValues { success: number, bytes: number, duration: number, failures: number, lastRun: number }

/** The values of a metrics file, by the names the tests use. */
export function readMetrics (path: string): BackupMetricValues {
  const text = readFileSync(path, 'utf8')
  const value = (name: string) => Number(new RegExp(`^petstore_backup_${name} (\\S+)$`, 'm').exec(text)?.[1])
  return {
    success: value('last_success_timestamp_seconds'),
    bytes: value('last_size_bytes'),
    duration: value('last_duration_seconds'),
    failures: value('consecutive_failures'),
    lastRun: value('last_run_timestamp_seconds')
  }
}

/** The whole metrics file with these values. */
export function backupMetrics ({ success, bytes, duration, failures, lastRun }: BackupMetricValues): string {
  return `# HELP petstore_backup_last_success_timestamp_seconds When the last backup that was written and checked finished, in seconds since the epoch; 0 if none has.
# TYPE petstore_backup_last_success_timestamp_seconds gauge
petstore_backup_last_success_timestamp_seconds ${success}
# HELP petstore_backup_last_size_bytes The size of the last backup that was written and checked.
# TYPE petstore_backup_last_size_bytes gauge
petstore_backup_last_size_bytes ${bytes}
# HELP petstore_backup_last_duration_seconds How long the last backup that was written and checked took, checks included.
# TYPE petstore_backup_last_duration_seconds gauge
petstore_backup_last_duration_seconds ${duration}
# HELP petstore_backup_consecutive_failures Backup runs that failed since the last one that succeeded.
# TYPE petstore_backup_consecutive_failures gauge
petstore_backup_consecutive_failures ${failures}
# HELP petstore_backup_last_run_timestamp_seconds When the last backup run ended, whatever its outcome, in seconds since the epoch.
# TYPE petstore_backup_last_run_timestamp_seconds gauge
petstore_backup_last_run_timestamp_seconds ${lastRun}
`
}
