import { Command } from 'commander'
import { generateApiKey } from '../auth/api-key.ts'
import { keyCreatedEvents } from '../store/key-events.ts'
import { KEY_SCOPES, type ApiKeyRecord, type KeyAudit, type KeyScope } from '../store/types.ts'
import { durationMs, isoTime, keyAudit, keyLogCommand, logKeyChanges } from './key-trail.ts'
import { cell, Failure, note, print, printRow, refuseUnsafeText, UsageError } from './output.ts'
import type { CommandStore } from './command-store.ts'

/**
 * keys create, list, revoke, rotate, log: the API keys of the database, never their secrets once
 * issued. Each change is recorded in the key trail with its actor and host (key-trail.ts).
 */

const DEFAULT_GRACE = '24h'
const ACTOR_HELP = 'who makes this change, for the key trail (default: the OS user)'

interface JsonOption { json?: boolean }
interface ChangeOptions extends JsonOption { actor?: string }
interface CreateOptions extends ChangeOptions { name?: string, scope?: string }
interface RotateOptions extends ChangeOptions { keepOldUntil?: string, grace?: string }

export function keysCommand (store: CommandStore, env: Record<string, string | undefined>): Command {
  const keys = new Command('keys').description('Issue, list, revoke and rotate API keys, and show who did.').usage('<command> [options]')
  keys.command('create')
    .description('Issue an API key. Prints the key alone on stdout; it is shown only this once.')
    .usage('--name NAME [--scope read|write] [--actor NAME] [--json]')
    .option('--name <NAME>', 'what the key is for, 1 to 100 characters')
    .option('--scope <SCOPE>', 'read: list and get animals; write: also add them (the default)')
    .option('--actor <NAME>', ACTOR_HELP)
    .option('--json', 'print the key\'s record and the key as JSON')
    .action(async (options: CreateOptions) => {
      const name = keyName(options.name)
      const scope = keyScope(options.scope)
      const audit = keyAudit(options.actor, env)
      const generated = generateApiKey()
      const s = await store.open()
      await s.migrate()
      const record = await s.createApiKey({ name, hash: generated.hash, prefix: generated.prefix, scope }, audit)
      logKeyChanges(keyCreatedEvents(record, audit))
      print(options.json ? JSON.stringify({ ...record, key: generated.key }) : generated.key)
    })
  keys.command('list')
    .description('List keys: id, name, prefix, scope, created, last used, state. Never the secret.')
    .usage('[--json]')
    .option('--json', 'print the keys\' records as JSON')
    .action(async (options: JsonOption) => {
      const records = await (await store.openExisting()).listApiKeys()
      if (options.json) return print(JSON.stringify(records))
      printRow(['id', 'name', 'prefix', 'scope', 'created', 'last used', 'state'])
      const now = Date.now()
      for (const key of records) printRow(keyCells(key, now))
    })
  keys.command('revoke')
    .description('Revoke a key at once. Revoking a revoked key is not an error (exit 0): it changes nothing, and says so.')
    .usage('ID [--actor NAME] [--json]')
    .argument('[id]')
    .option('--actor <NAME>', ACTOR_HELP)
    .option('--json', 'print {"revoked": ID}, with "alreadyRevokedAt" when it was revoked before')
    .action(async (text: string | undefined, options: ChangeOptions) => revoke(store, keyId(text), keyAudit(options.actor, env), options))
  keys.command('rotate')
    .description(`Issue a key with the same name and scope and print it alone on stdout; the old key keeps working until the given time, or for --grace (${DEFAULT_GRACE} by default).`)
    .usage('ID [--keep-old-until ISO | --grace DURATION] [--actor NAME] [--json]')
    .argument('[id]')
    .option('--keep-old-until <ISO>', 'when the old key stops working: an ISO 8601 time with a zone')
    .option('--grace <DURATION>', `how long the old key keeps working: 30m, 24h, 7d (default ${DEFAULT_GRACE})`)
    .option('--actor <NAME>', ACTOR_HELP)
    .option('--json', 'print the new key\'s record, the key, and the old key\'s record as JSON')
    .action(async (text: string | undefined, options: RotateOptions) => rotate(store, keyId(text), keyAudit(options.actor, env), options))
  keys.addCommand(keyLogCommand(store, keyId))
  return keys
}

async function revoke (store: CommandStore, id: number, audit: KeyAudit, options: JsonOption): Promise<void> {
  const revoked = await (await store.openExisting()).revokeApiKey(id, audit)
  if (revoked.outcome === 'not_found') throw new Failure(`no key has id ${id}`)
  if (revoked.outcome === 'revoked') {
    logKeyChanges([revoked.event])
    return print(options.json ? JSON.stringify({ revoked: id }) : `revoked key ${id}`)
  }
  // Not an error (exit 0): the key is revoked, as asked. stdout says this run changed nothing.
  const at = revoked.key.revokedAt
  print(options.json ? JSON.stringify({ revoked: id, alreadyRevokedAt: at }) : `key ${id} was already revoked at ${cell(at)}; nothing changed`)
}

async function rotate (store: CommandStore, id: number, audit: KeyAudit, options: RotateOptions): Promise<void> {
  const now = Date.now()
  const expiresAt = oldKeyExpiry(options, now)
  const s = await store.openExisting()
  const old = (await s.listApiKeys()).find((key) => key.id === id)
  if (!old) throw new Failure(`no key has id ${id}`)
  const generated = generateApiKey()
  const rotated = await s.rotateApiKey(id, { name: old.name, hash: generated.hash, prefix: generated.prefix }, expiresAt, new Date(now).toISOString(), audit)
  if (rotated.outcome === 'not_usable') throw new Failure(`key ${id} is revoked or expired; issue a new one with keys create`)
  if (rotated.outcome === 'has_successor') {
    throw new Failure(`key ${id} was already rotated: its successor, key ${rotated.successor.id}, is still usable; rotate key ${rotated.successor.id}, or revoke it first`)
  }
  logKeyChanges(rotated.events)
  if (options.json) return print(JSON.stringify({ ...rotated.created, key: generated.key, old: rotated.old }))
  print(generated.key)
  note(`key ${id} (${cell(old.name)}) keeps working until ${cell(rotated.old.expiresAt)}; the new key has id ${rotated.created.id}`)
}

/** Each cell escaped by printRow: a name stored by an older release, or written straight into the database, still prints as one cell. */
function keyCells (key: ApiKeyRecord, now: number): Array<string | number> {
  return [key.id, key.name, `${key.prefix}…`, key.scope, key.createdAt, key.lastUsedAt ?? 'never used', keyState(key, now)]
}

/** --name: 1 to 100 characters once trimmed, none of them a control character (output.ts, UNSAFE_TEXT). */
function keyName (given: string | undefined): string {
  refuseUnsafeText('--name NAME', given)
  const name = given?.trim() ?? ''
  if (!name || name.length > 100) throw new UsageError('--name NAME is required (1 to 100 characters)')
  return name
}

/** Revoked, expired (a rotated key past its grace), to expire, or active. */
function keyState (key: ApiKeyRecord, now: number): string {
  if (key.revokedAt) return `revoked ${key.revokedAt}`
  if (key.expiresAt) return `${Date.parse(key.expiresAt) <= now ? 'expired' : 'expires'} ${key.expiresAt}`
  return 'active'
}

function keyScope (text: string | undefined): KeyScope {
  const scope = KEY_SCOPES.find((known) => known === (text ?? 'write'))
  if (!scope) throw new UsageError(`--scope needs read or write; got ${JSON.stringify(text)}`)
  return scope
}

function keyId (text: string | undefined): number {
  if (text === undefined || !/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`expected a key id (a positive whole number), got ${JSON.stringify(text ?? '')}`)
  return Number(text)
}

/** When a rotated key stops working: --keep-old-until ISO, or now + --grace (30m, 24h, 7d), 24h by default. */
function oldKeyExpiry ({ keepOldUntil, grace }: RotateOptions, now: number): string {
  if (keepOldUntil !== undefined && grace !== undefined) throw new UsageError('give --keep-old-until or --grace, not both')
  if (keepOldUntil !== undefined) {
    const at = isoTime(keepOldUntil)
    if (Number.isNaN(at)) throw new UsageError(`--keep-old-until needs an ISO 8601 time with a zone, e.g. 2030-01-31T12:00:00Z; got ${JSON.stringify(keepOldUntil)}`)
    if (at <= now) throw new UsageError(`--keep-old-until ${keepOldUntil} is not in the future; to stop a key now, use keys revoke`)
    return new Date(at).toISOString()
  }
  const ms = durationMs(grace ?? DEFAULT_GRACE)
  if (ms === undefined) throw new UsageError(`--grace needs a duration such as 30m, 24h or 7d; got ${JSON.stringify(grace)}`)
  return new Date(now + ms).toISOString()
}
