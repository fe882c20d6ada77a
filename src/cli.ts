import { parseArgs, type ParseArgsConfig } from 'node:util'
import { loadConfig } from './config.ts'
import { generateApiKey } from './keys.ts'
import { serve, startFailure } from './server.ts'
import { openStore, poolOptions } from './store/index.ts'
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
  run(args: { values: Record<string, unknown>, positionals: string[], store: () => Promise<Store> }): Promise<void>
}

const json = { type: 'boolean', default: false } as const
const print = (line: string): void => { process.stdout.write(line + '\n') }

function keyLine (key: ApiKeyRecord): string {
  const state = key.revokedAt ? `revoked ${key.revokedAt}` : key.expiresAt ? `expires ${key.expiresAt}` : 'active'
  return [key.id, key.name, `${key.prefix}…`, key.createdAt, key.lastUsedAt ?? 'never used', state].join('\t')
}

function positiveId (text: string | undefined): number {
  if (text === undefined || !/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`expected a key id (a positive whole number), got ${JSON.stringify(text ?? '')}`)
  return Number(text)
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
    options: { json },
    async run ({ values, store }) {
      const s = await store()
      await s.migrate()
      const keys = await s.listApiKeys()
      if (values.json) return print(JSON.stringify(keys))
      print(['id', 'name', 'prefix', 'created', 'last used', 'state'].join('\t'))
      for (const key of keys) print(keyLine(key))
    }
  },
  'keys revoke': {
    usage: 'keys revoke ID [--json]',
    summary: 'Revoke a key at once. Revoking a revoked key is not an error.',
    options: { json },
    positionals: 1,
    async run ({ values, positionals, store }) {
      const id = positiveId(positionals[0])
      const s = await store()
      await s.migrate()
      if (!await s.revokeApiKey(id)) throw new Failure(`no key has id ${id}`)
      print(values.json ? JSON.stringify({ revoked: id }) : `revoked key ${id}`)
    }
  }
}

function helpText (): string {
  const lines = ['Usage: npm run --silent petstore -- <command> [options]', '', 'Commands:']
  for (const command of Object.values(COMMANDS)) lines.push(`  ${command.usage.padEnd(36)} ${command.summary}`)
  lines.push('', 'Every command reads DATABASE_URL (default sqlite:./data/petstore.db).',
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
      return (opened = await openStore(config.DATABASE_URL, poolOptions(config)))
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
  const code = await main(process.argv.slice(2))
  if (!process.argv.slice(2).includes('serve')) process.exitCode = code
}
