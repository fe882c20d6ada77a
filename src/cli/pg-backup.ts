import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'
import { createInterface } from 'node:readline'
import { parsePostgresUrl } from '../store/index.ts'
import { codeOf, expectedTables, messageOf, partialFile, placeFile, refuseExisting, removePartial } from './backup-files.ts'
import { Failure } from './output.ts'

/**
 * On PostgreSQL a backup is pg_dump's: it takes one consistent snapshot while instances serve,
 * and its custom format is what pg_restore reads. This adds what an operator gets wrong by
 * hand: the file made 0600 (pg_dump gives it the umask's mode, readable by all), the service's
 * own ?schema= turned into --schema, the password kept off the command line, and the dump
 * checked with pg_restore before the command says it is done.
 */

/** A dump written and checked. */
export interface PostgresBackup extends DumpContents { file: string, bytes: number, schema: string | undefined }

/** What a checked dump holds: its migration, the tables that migration needs, and the rows of two. */
interface DumpContents { migration: number, tables: string[], pets: number, keys: number }

/** `env`: the command's environment, handed on to pg_dump (PGSSLMODE, PGPASSFILE and the like). */
export async function backupPostgres (url: string, file: string, force: boolean, connectTimeoutMs: number, env: Record<string, string | undefined>): Promise<PostgresBackup> {
  const { schema } = parsePostgresUrl(url)
  const { dbname, password } = libpqTarget(url)
  refuseExisting(file, force)
  const partial = partialFile(file)
  try {
    const dumpEnv = {
      ...env,
      ...(password !== undefined && { PGPASSWORD: password }),
      // libpq's own bound on connecting, in whole seconds, at least 2.
      PGCONNECT_TIMEOUT: String(Math.max(2, Math.ceil(connectTimeoutMs / 1000)))
    }
    // pg_dump writes into the existing 0600 file (it truncates it, keeping the mode).
    await run('pg_dump', ['--format=custom', '--no-owner', ...(schema ? [`--schema=${schema}`] : []), `--file=${partial}`, `--dbname=${dbname}`], dumpEnv)
    const checked = await checkDump(partial, env)
    const bytes = statSync(partial).size
    placeFile(partial, file, force)
    return { file: resolvePath(file), bytes, schema, ...checked }
  } finally {
    removePartial(partial)
  }
}

/**
 * pg_restore reads the whole table of contents, then the rows of the ledger, the pets and the
 * keys from the data: the migration the dump is at, every table that migration needs with its
 * data, and what the dump holds, in the words SQLite's backup uses.
 */
async function checkDump (dump: string, env: Record<string, string | undefined>): Promise<DumpContents> {
  const contents = await run('pg_restore', ['--list', dump], env)
  const withData = new Set([...contents.matchAll(/ TABLE DATA \S+ ([a-z_][a-z0-9_]*) /g)].map((match) => match[1]!))
  const rows = new RowCounter(['pets', 'api_keys', 'schema_migrations'])
  await run('pg_restore', ['--data-only', '--table=pets', '--table=api_keys', '--table=schema_migrations', '--file=-', dump], env, (line) => rows.read(line))
  const migration = rows.migration
  const tables = expectedTables('postgres', migration)
  const missing = tables.filter((table) => !withData.has(table))
  if (migration === 0 || missing.length > 0) {
    throw new Failure(`the dump is not a petstore database: ${migration === 0 ? 'schema_migrations has no rows' : `at migration ${migration} it lacks ${missing.join(', ')}`}; check DATABASE_URL's ?schema=`, 'not_petstore')
  }
  return { migration, tables, pets: rows.count('pets'), keys: rows.count('api_keys') }
}

/**
 * Counts the rows of pg_restore's plain output one line at a time, so a large dump is never held
 * in memory: "COPY schema.table (columns) FROM stdin;", then one row per line (a newline inside
 * a value is written \n), up to "\.". The ledger's versions are kept to find the migration.
 */
class RowCounter {
  private readonly tables: string[]
  private readonly counts = new Map<string, number>()
  private table: string | undefined
  private versionAt = -1
  migration = 0

  constructor (tables: string[]) {
    this.tables = tables
  }

  read (line: string): void {
    if (this.table === undefined) {
      const copy = /^COPY (?:\S+\.)?"?([a-z_][a-z0-9_]*)"? \(([^)]*)\) FROM stdin;$/.exec(line)
      if (!copy || !this.tables.includes(copy[1]!)) return
      this.table = copy[1]!
      this.versionAt = copy[2]!.split(',').map((column) => column.trim()).indexOf('version')
      return
    }
    if (line === '\\.') {
      this.table = undefined
      return
    }
    this.counts.set(this.table, this.count(this.table) + 1)
    if (this.table === 'schema_migrations') this.migration = Math.max(this.migration, Number(line.split('\t')[this.versionAt]) || 0)
  }

  count (table: string): number {
    return this.counts.get(table) ?? 0
  }
}

/** The URL libpq reads, without the service's ?schema= (libpq refuses parameters it does not know), and its password apart. */
function libpqTarget (url: string): { dbname: string, password: string | undefined } {
  const [, scheme = '', userinfo, rest = ''] = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?(.*)$/is.exec(url) ?? []
  const colon = userinfo?.indexOf(':') ?? -1
  const user = userinfo === undefined ? '' : `${colon < 0 ? userinfo : userinfo.slice(0, colon)}@`
  const password = userinfo !== undefined && colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : undefined
  const [address = '', query] = rest.split('?', 2)
  const params = new URLSearchParams(query)
  params.delete('schema')
  const kept = params.toString()
  return { dbname: `${scheme}${user}${address}${kept ? `?${kept}` : ''}`, password }
}

/**
 * Runs a PostgreSQL client tool; its stdout on success, its stderr in the failure. With
 * `onLine`, stdout goes to it line by line instead, and the promise resolves to ''.
 */
function run (tool: string, args: string[], env: Record<string, string | undefined>, onLine?: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const lines = onLine && createInterface({ input: child.stdout, crlfDelay: Infinity })
    if (lines) lines.on('line', onLine)
    else child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
    child.on('error', (error) => {
      reject(codeOf(error) === 'ENOENT'
        ? new Failure(`${tool} is not installed: install PostgreSQL's client tools of the server's major version or later (Debian: apt-get install postgresql-client)`, 'no_tool')
        : new Failure(`${tool} could not run: ${messageOf(error)}`))
    })
    child.on('close', (code) => {
      if (code === 0) return resolve(stdout)
      // Its message can span lines (the error, then a hint): one line here, as every CLI failure.
      reject(new Failure(`${tool} failed (exit ${code}): ${stderr.trim().replace(/\s*\n\s*/g, ' ')}`, 'failed'))
    })
  })
}
