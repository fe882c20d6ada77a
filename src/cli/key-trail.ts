import { hostname, userInfo } from 'node:os'
import { Command } from 'commander'
import pino from 'pino'
import type { KeyAudit, KeyEvent } from '../store/types.ts'
import { cell, print, printRow, refuseUnsafeText, UsageError } from './output.ts'
import type { CommandStore } from './command-store.ts'

/**
 * The key trail on the command line: who a key change is recorded as (--actor, else the OS
 * user) and on which host, the one structured log line each change also gets, and `keys log`.
 */

const DURATION_UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/
const ISO_DATE = /^\d{4}-\d\d-\d\d$/

/** 30s, 30m, 24h, 7d in milliseconds; undefined for anything else. */
export function durationMs (text: string): number | undefined {
  const match = /^([1-9]\d{0,5})([smhd])$/.exec(text)
  return match ? Number(match[1]) * DURATION_UNITS_MS[match[2]!]! : undefined
}

/** An ISO 8601 time with a zone, in milliseconds; NaN for anything else. */
export function isoTime (text: string): number {
  return ISO_TIME.test(text) ? Date.parse(text) : Number.NaN
}

/**
 * The actor of a key change: --actor, else the OS user. A process whose uid has no passwd entry
 * (a container run with --user 10001) has no user name: then $USER, else `uid N`. An --actor
 * holding a control character is refused (output.ts, UNSAFE_TEXT): it could forge rows of keys log.
 */
export function keyAudit (actor: string | undefined, env: Record<string, string | undefined>, user: () => { username: string } = userInfo): KeyAudit {
  if (actor !== undefined) {
    refuseUnsafeText('--actor NAME', actor)
    const name = actor.trim()
    if (!name || name.length > 100) throw new UsageError('--actor NAME needs 1 to 100 characters')
    return { actor: name, host: hostname() }
  }
  return { actor: osUser(env, user), host: hostname() }
}

function osUser (env: Record<string, string | undefined>, user: () => { username: string }): string {
  try {
    return user().username
  } catch {
    return env.USER || `uid ${process.getuid?.() ?? 'unknown'}`
  }
}

/** Where a key change is told: the command's stderr, or a test's. */
export interface ChangeOutput { readonly isTTY?: boolean, write(text: string): unknown }

/**
 * Each change on stderr, after the commit only (a change that failed logs nothing); stdout
 * stays the command's output (a key alone, or JSON) for scripts. Not on a terminal: one JSON
 * line in the service's log format with the fields of its row in the trail, which a runner
 * that keeps stderr (a container, CI, systemd) keeps. On a terminal: the same in words, since a
 * person reads it there and `keys log` holds the row.
 */
export function logKeyChanges (events: KeyEvent[], output: ChangeOutput = process.stderr): void {
  if (output.isTTY) {
    for (const event of events) output.write(`key change: ${describe(event)}, by ${cell(event.actor)} on ${cell(event.host)}\n`)
    return
  }
  const logger = pino({}, { write: (line: string) => { output.write(line) } })
  for (const event of events) logger.info({ event: 'key_change', ...event }, `key change by ${event.actor} on ${event.host}: ${describe(event)}`)
}

/** The change in words; the name cell()ed, so that on a terminal it cannot forge a line. */
function describe ({ change, keyId, name, scope, relatedKeyId, at }: KeyEvent): string {
  switch (change) {
    case 'create': return `issued key ${keyId} (${cell(name)}, ${scope})${relatedKeyId === null ? '' : ` to replace key ${relatedKeyId}`}`
    case 'revoke': return `revoked key ${keyId} (${cell(name)})`
    case 'rotate': return `rotated key ${keyId} (${cell(name)}); its successor is key ${relatedKeyId}`
    case 'expires': return `key ${keyId} (${cell(name)}) stops working at ${at}`
  }
}

interface LogOptions { json?: boolean, since?: string, key?: string }

export function keyLogCommand (store: CommandStore, keyId: (text: string | undefined) => number): Command {
  return new Command('log')
    .description('Show the key trail, oldest first: who created, revoked and rotated which key, when and from which host, and when rotated keys expire (dated ahead until then). Never a key or its hash.')
    .usage('[--since TIME] [--key ID] [--json]')
    .option('--since <TIME>', 'only from this time on: ISO 8601 (2030-01-31, 2030-01-31T12:00:00Z) or back from now (30m, 24h, 7d)')
    .option('--key <ID>', 'only the changes of this key')
    .option('--json', 'print the rows as a JSON array')
    .action(async (options: LogOptions) => {
      const now = Date.now()
      const filter = {
        ...(options.since === undefined ? {} : { since: sinceTime(options.since, now) }),
        ...(options.key === undefined ? {} : { keyId: keyId(options.key) })
      }
      const events = await (await store.openExisting()).listKeyEvents(filter)
      if (options.json) return print(JSON.stringify(events))
      printRow(['time', 'change', 'key', 'prefix', 'name', 'scope', 'actor', 'host', 'detail'])
      for (const event of events) printRow(eventCells(event, now))
    })
}

/** Each cell escaped by printRow: a row stored by an older release, or written straight into the database, still prints as one row. */
function eventCells (event: KeyEvent, now: number): Array<string | number> {
  return [event.at, event.change, event.keyId, `${event.prefix}…`, event.name, event.scope, event.actor, event.host, detail(event, now)]
}

function detail ({ change, relatedKeyId, at }: KeyEvent, now: number): string {
  if (change === 'rotate') return `successor ${relatedKeyId}`
  if (change === 'create' && relatedKeyId !== null) return `replaces ${relatedKeyId}`
  if (change === 'expires' && Date.parse(at) > now) return 'scheduled'
  return ''
}

/** --since: an ISO 8601 date (midnight UTC) or time with a zone, or a duration back from now. */
function sinceTime (text: string, now: number): string {
  const back = durationMs(text)
  const at = back !== undefined ? now - back : ISO_DATE.test(text) ? Date.parse(`${text}T00:00:00Z`) : isoTime(text)
  if (Number.isNaN(at)) throw new UsageError(`--since needs an ISO 8601 time (2030-01-31 or 2030-01-31T12:00:00Z) or a duration back from now (30m, 24h, 7d); got ${JSON.stringify(text)}`)
  return new Date(at).toISOString()
}
