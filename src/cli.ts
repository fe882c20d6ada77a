import { createReadStream, existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { exportPets, importPets } from './cli/pets.ts'
import { loadConfig } from './config.ts'
import { generateApiKey } from './auth/keys.ts'
import { createProgress } from './cli/progress.ts'
import { PET_STATUSES, type PetStatus } from './contract/schemas.ts'
import { serve, startFailure } from './server.ts'
import { describeCause, redactUrl } from './store/errors.ts'
import { openStore, poolOptions, StoreUnavailableError } from './store/index.ts'
import type { ApiKeyRecord, Store } from './store/types.ts'

/** Exit codes: 0 ok, 1 the operation failed, 2 the command line was wrong. */
export class UsageError extends Error {}
class Failure extends Error {}

interface Command {
  usage: string
  summary: string
  options?: ParseArgsConfig['options']
  /** How many words may follow the command (the id of keys revoke); more is a usage error. */
  positionals?: number
  /**
   * The command only reads or changes data that must already be there, so it never creates a
   * database or migrates one: a mistyped DATABASE_URL is an error, not an empty answer.
   */
  needsExistingDatabase?: boolean
  run(args: { values: Record<string, unknown>, positionals: string[], store: () => Promise<Store> }): Promise<void>
}

const json = { type: 'boolean', default: false } as const
const print = (line: string): void => { process.stdout.write(line + '\n') }
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`

function keyLine (key: ApiKeyRecord): string {
  const state = key.revokedAt ? `revoked ${key.revokedAt}` : key.expiresAt ? `expires ${key.expiresAt}` : 'active'
  return [key.id, key.name, `${key.prefix}…`, key.createdAt, key.lastUsedAt ?? 'never used', state].join('\t')
}

function positiveId (text: string | undefined): number {
  if (text === undefined || !/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`expected a key id (a positive whole number), got ${JSON.stringify(text ?? '')}`)
  return Number(text)
}

const DURATION_UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const DEFAULT_GRACE = '24h'

/** When a rotated key stops working: --keep-old-until ISO, or now + --grace (30m, 24h, 7d), 24h by default. */
function oldKeyExpiry (values: Record<string, unknown>, now: number): string {
  if (values['keep-old-until'] !== undefined && values.grace !== undefined) throw new UsageError('give --keep-old-until or --grace, not both')
  if (typeof values['keep-old-until'] === 'string') {
    const text = values['keep-old-until']
    const at = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(text) ? Date.parse(text) : Number.NaN
    if (Number.isNaN(at)) throw new UsageError(`--keep-old-until needs an ISO 8601 time with a zone, e.g. 2030-01-31T12:00:00Z; got ${JSON.stringify(text)}`)
    if (at <= now) throw new UsageError(`--keep-old-until ${text} is not in the future; to stop a key now, use keys revoke`)
    return new Date(at).toISOString()
  }
  const text = typeof values.grace === 'string' ? values.grace : DEFAULT_GRACE
  const match = /^([1-9]\d{0,5})([smhd])$/.exec(text)
  if (!match) throw new UsageError(`--grace needs a duration such as 30m, 24h or 7d; got ${JSON.stringify(text)}`)
  return new Date(now + Number(match[1]) * DURATION_UNITS_MS[match[2]!]!).toISOString()
}

function positiveInteger (value: unknown, option: string, fallback: number, max: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || !/^[1-9]\d*$/.test(value) || Number(value) > max) throw new UsageError(`${option} needs a whole number from 1 to ${max}; got ${JSON.stringify(value)}`)
  return Number(value)
}

function petStatus (value: unknown): PetStatus | undefined {
  if (value === undefined) return undefined
  if (!PET_STATUSES.includes(value as PetStatus)) throw new UsageError(`--status must be one of ${PET_STATUSES.join(', ')}; got ${JSON.stringify(value)}`)
  return value as PetStatus
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'serve',
    summary: 'Serve the API (the same as npm start).',
    async run () { await serve(process.env).catch(startFailure) }
  },
  migrate: {
    usage: 'migrate [--json]',
    summary: 'Apply pending database migrations, then exit.',
    options: { json },
    async run ({ values, store }) {
      const applied = await (await store()).migrate()
      print(values.json ? JSON.stringify({ applied }) : applied.length ? `applied ${applied.join(', ')}` : 'up to date')
    }
  },
  'keys create': {
    usage: 'keys create --name NAME [--json]',
    summary: 'Issue an API key. Prints the key alone on stdout; it is shown only this once.',
    options: { name: { type: 'string' }, json },
    async run ({ values, store }) {
      const name = typeof values.name === 'string' ? values.name.trim() : ''
      if (!name || name.length > 100) throw new UsageError('--name NAME is required (1 to 100 characters)')
      const generated = generateApiKey()
      const s = await store()
      await s.migrate()
      const record = await s.createApiKey({ name, hash: generated.hash, prefix: generated.prefix })
      print(values.json ? JSON.stringify({ ...record, key: generated.key }) : generated.key)
    }
  },
  'keys list': {
    usage: 'keys list [--json]',
    summary: 'List keys: id, name, prefix, created, last used, state. Never the secret.',
    needsExistingDatabase: true,
    options: { json },
    async run ({ values, store }) {
      const s = await store()
      const keys = await s.listApiKeys()
      if (values.json) return print(JSON.stringify(keys))
      print(['id', 'name', 'prefix', 'created', 'last used', 'state'].join('\t'))
      for (const key of keys) print(keyLine(key))
    }
  },
  'keys revoke': {
    usage: 'keys revoke ID [--json]',
    summary: 'Revoke a key at once. Revoking a revoked key is not an error.',
    needsExistingDatabase: true,
    options: { json },
    positionals: 1,
    async run ({ values, positionals, store }) {
      const id = positiveId(positionals[0])
      const s = await store()
      if (!await s.revokeApiKey(id)) throw new Failure(`no key has id ${id}`)
      print(values.json ? JSON.stringify({ revoked: id }) : `revoked key ${id}`)
    }
  },
  'keys rotate': {
    usage: 'keys rotate ID [--keep-old-until ISO | --grace DURATION] [--json]',
    summary: `Issue a key with the same name and print it alone on stdout; the old key keeps working until the given time, or for --grace (${DEFAULT_GRACE} by default).`,
    needsExistingDatabase: true,
    options: { 'keep-old-until': { type: 'string' }, grace: { type: 'string' }, json },
    positionals: 1,
    async run ({ values, positionals, store }) {
      const id = positiveId(positionals[0])
      const now = Date.now()
      const expiresAt = oldKeyExpiry(values, now)
      const s = await store()
      const old = (await s.listApiKeys()).find((key) => key.id === id)
      if (!old) throw new Failure(`no key has id ${id}`)
      const generated = generateApiKey()
      const rotated = await s.rotateApiKey(id, { name: old.name, hash: generated.hash, prefix: generated.prefix }, expiresAt, new Date(now).toISOString())
      if (!rotated) throw new Failure(`key ${id} is revoked or expired; issue a new one with keys create`)
      if (values.json) return print(JSON.stringify({ ...rotated.created, key: generated.key, old: rotated.old }))
      print(generated.key)
      process.stderr.write(`key ${id} (${old.name}) keeps working until ${rotated.old.expiresAt}; the new key has id ${rotated.created.id}\n`)
    }
  },
  'pets import': {
    usage: 'pets import FILE.jsonl [--batch-size N] [--start-line N] [--json]',
    summary: 'Add the pets of a JSON Lines file (- for stdin), checked like createPet, N per transaction (default 500). A bad line stops the import: batches before it stay, nothing of its batch is written.',
    options: { 'batch-size': { type: 'string' }, 'start-line': { type: 'string' }, json },
    positionals: 1,
    async run ({ values, positionals, store }) {
      const file = positionals[0]
      if (file === undefined) throw new UsageError('expected the file to import (FILE.jsonl, or - for stdin)')
      const batchSize = positiveInteger(values['batch-size'], '--batch-size', 500, 10_000)
      const startLine = positiveInteger(values['start-line'], '--start-line', 1, Number.MAX_SAFE_INTEGER)
      let size: number | undefined
      if (file !== '-') {
        try {
          size = statSync(file).size
        } catch (error) {
          throw new Failure(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
        }
      }
      const s = await store()
      await s.migrate()
      const started = performance.now()
      const input = file === '-' ? process.stdin : createReadStream(file)
      const summary = await importPets(s, input, { batchSize, startLine, progress: createProgress(process.stderr, size, 'pets') })
      const seconds = ((performance.now() - started) / 1000).toFixed(2)
      print(values.json
        ? JSON.stringify(summary)
        : `imported ${count(summary.imported, 'pet')} from ${count(summary.lines, 'line')} in ${count(summary.batches, 'transaction')} (${seconds} s)`)
    }
  },
  'pets export': {
    usage: 'pets export [--status STATUS]',
    summary: 'Write every pet (with that status) to stdout as JSON Lines, in id order, int64 exact. The summary goes to stderr.',
    needsExistingDatabase: true,
    options: { status: { type: 'string' } },
    async run ({ values, store }) {
      const status = petStatus(values.status)
      const s = await store()
      const total = status === undefined ? await s.countPets() : undefined
      const exported = await exportPets(s, process.stdout, { status, progress: createProgress(process.stderr, total, 'pets') })
      process.stderr.write(`exported ${count(exported, 'pet')}\n`)
    }
  }
}

const MIGRATE_FIRST = 'check it, or start the server or run "npm run --silent petstore -- migrate" first'

/** Opening a SQLite path creates the file (and the CLI's store its folder): look before opening. */
async function refuseMissingSqliteFile (url: string): Promise<void> {
  if (!url.startsWith('sqlite:')) return
  const { sqlitePath } = await import('./store/sqlite/store.ts')
  const path = sqlitePath(url)
  if (path !== ':memory:' && !existsSync(path)) throw new Failure(`DATABASE_URL ${url} names no database (no file at ${resolve(path)}): ${MIGRATE_FIRST}`)
}

/** An unmigrated database would answer "no keys" or "no such key"; say what is wrong instead. */
async function requireMigratedSchema (store: Store, url: string): Promise<void> {
  try {
    await store.checkReady()
  } catch (error) {
    // An unreachable database is a different problem, and its message already names it.
    if (error instanceof StoreUnavailableError) throw error
    throw new Failure(`DATABASE_URL ${redactUrl(url)} is not a migrated petstore database (${describeCause(error)}): ${MIGRATE_FIRST}`)
  }
}

function helpText (): string {
  const lines = ['Usage: npm run --silent petstore -- <command> [options]', '', 'Commands:']
  for (const command of Object.values(COMMANDS)) lines.push(`  ${command.usage}`, `      ${command.summary}`)
  lines.push('', 'Every command reads DATABASE_URL (default sqlite:./data/petstore.db). serve, migrate, keys create and',
    'pets import create and migrate the database when needed; the other commands need a migrated one.',
    'Exit codes: 0 ok, 1 the operation failed, 2 the command line was wrong.')
  return lines.join('\n')
}

export async function main (argv: string[]): Promise<number> {
  const words = argv.filter((arg) => !arg.startsWith('-'))
  const name = [`${words[0]} ${words[1]}`, words[0]].find((candidate) => candidate !== undefined && candidate in COMMANDS)
  if (!name) {
    if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) { print(helpText()); return argv.length === 0 ? 2 : 0 }
    process.stderr.write(`petstore: unknown command ${JSON.stringify(words.join(' '))}\n${helpText()}\n`)
    return 2
  }
  const command = COMMANDS[name]!
  const rest = argv.slice(argv.indexOf(name.split(' ').at(-1)!) + 1)
  let opened: Store | undefined
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true
    })
    if (values.help) { print(`Usage: npm run --silent petstore -- ${command.usage}\n${command.summary}`); return 0 }
    const extra = positionals[command.positionals ?? 0]
    if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`)
    const store = async () => {
      if (opened) return opened
      const config = loadConfig(process.env)
      if (command.needsExistingDatabase) await refuseMissingSqliteFile(config.DATABASE_URL)
      opened = await openStore(config.DATABASE_URL, poolOptions(config))
      if (command.needsExistingDatabase) await requireMigratedSchema(opened, config.DATABASE_URL)
      return opened
    }
    await command.run({ values, positionals, store })
    return 0
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    process.stderr.write(`petstore ${name}: ${message}\n`)
    if (usage) process.stderr.write(`Usage: npm run --silent petstore -- ${command.usage}\n`)
    return usage ? 2 : 1
  } finally {
    if (name !== 'serve') await opened?.close()
  }
}

if (import.meta.main) {
  // `serve` returns once listening and keeps running; its exit comes from the signal handlers.
  process.exitCode = await main(process.argv.slice(2))
}
