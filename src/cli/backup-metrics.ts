import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { messageOf } from './backup-files.ts'
import { Failure } from './output.ts'

/**
 * `backup --metrics-file`: what the last run did, for node_exporter's textfile collector, which
 * reads every *.prom file of its folder at each scrape. The service is not running when a backup
 * runs from a timer, so the backup reports itself. A failed run keeps what the last success
 * wrote (its time, size and duration: the age of the newest good backup is what alerts read) and
 * counts the failures since it.
 */

/** One run's outcome: a backup written (its size, how long it took), or a failure. */
export type BackupOutcome = { ok: true, at: Date, bytes: number, seconds: number } | { ok: false, at: Date }

interface LastSuccess { timestamp: number, bytes: number, seconds: number }

const METRICS = {
  timestamp: ['petstore_backup_last_success_timestamp_seconds', 'When the last backup that was written and checked finished, in seconds since the epoch; 0 if none has.'],
  bytes: ['petstore_backup_last_size_bytes', 'The size of the last backup that was written and checked.'],
  seconds: ['petstore_backup_last_duration_seconds', 'How long the last backup that was written and checked took, checks included.'],
  failures: ['petstore_backup_consecutive_failures', 'Backup runs that failed since the last one that succeeded.'],
  lastRun: ['petstore_backup_last_run_timestamp_seconds', 'When the last backup run ended, whatever its outcome, in seconds since the epoch.']
} as const

/** Writes the metrics of `outcome` to `path` whole: a scrape sees the previous file or this one, never a part. */
export function writeBackupMetrics (path: string, outcome: BackupOutcome): void {
  const previous = readPrevious(path)
  const last: LastSuccess = outcome.ok
    ? { timestamp: seconds(outcome.at), bytes: outcome.bytes, seconds: outcome.seconds }
    : previous.last
  const failures = outcome.ok ? 0 : previous.failures + 1
  const values = { timestamp: last.timestamp, bytes: last.bytes, seconds: last.seconds, failures, lastRun: seconds(outcome.at) }
  const text = (Object.keys(METRICS) as Array<keyof typeof METRICS>)
    .map((key) => { const [name, help] = METRICS[key]; return `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${values[key]}\n` })
    .join('')
  writeWhole(path, text)
}

/** The last success and the failure count of the file as a previous run wrote it; zeros without one. */
function readPrevious (path: string): { last: LastSuccess, failures: number } {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : ''
  const value = (key: keyof typeof METRICS): number => {
    const found = new RegExp(`^${METRICS[key][0]} (\\S+)$`, 'm').exec(text)
    const number = Number(found?.[1])
    return Number.isFinite(number) ? number : 0
  }
  return { last: { timestamp: value('timestamp'), bytes: value('bytes'), seconds: value('seconds') }, failures: value('failures') }
}

/**
 * Temp name in the same folder, written, synced, renamed over the file. The temp name does not
 * end in .prom, so the collector never reads it half-written.
 */
function writeWhole (path: string, text: string): void {
  const partial = join(dirname(resolve(path)), `.${basename(path)}.partial-${process.pid}`)
  try {
    const fd = openSync(partial, 'w', 0o644)
    try {
      writeSync(fd, text)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(partial, path)
  } catch (error) {
    rmSync(partial, { force: true })
    throw new Failure(`cannot write the metrics file ${resolve(path)}: ${messageOf(error)}`, 'cannot_write')
  }
}

// Whole seconds since the epoch, cut down as `date +%s` does: rounded, a run in the second half
// of a second would carry the time of the next.
const seconds = (at: Date): number => Math.floor(at.getTime() / 1000)
