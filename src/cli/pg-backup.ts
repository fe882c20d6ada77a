import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'
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
export interface PostgresBackup { file: string, bytes: number, schema: string | undefined, migration: number, tables: string[] }

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
 * pg_restore reads the whole table of contents, and the ledger's rows from the data: the
 * migration the dump is at, and every table that migration needs, with its data.
 */
async function checkDump (dump: string, env: Record<string, string | undefined>): Promise<{ migration: number, tables: string[] }> {
  const contents = await run('pg_restore', ['--list', dump], env)
  const withData = new Set([...contents.matchAll(/ TABLE DATA \S+ ([a-z_][a-z0-9_]*) /g)].map((match) => match[1]!))
  const ledger = await run('pg_restore', ['--data-only', '--table=schema_migrations', '--file=-', dump], env)
  // COPY … (columns) FROM stdin; then one row per line, tab-separated, up to "\.".
  const [, columns = '', rows = ''] = /^COPY \S*schema_migrations \(([^)]*)\) FROM stdin;\n([\s\S]*?)^\\\.$/m.exec(ledger) ?? []
  const at = columns.split(',').map((column) => column.trim()).indexOf('version')
  const migration = Math.max(0, ...rows.split('\n').filter(Boolean).map((row) => Number(row.split('\t')[at]) || 0))
  const tables = expectedTables('postgres', migration)
  const missing = tables.filter((table) => !withData.has(table))
  if (migration === 0 || missing.length > 0) {
    throw new Failure(`the dump is not a petstore database: ${migration === 0 ? 'schema_migrations has no rows' : `at migration ${migration} it lacks ${missing.join(', ')}`}; check DATABASE_URL's ?schema=`, 'not_petstore')
  }
  return { migration, tables }
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

/** Runs a PostgreSQL client tool; its stdout on success, its stderr in the failure. */
function run (tool: string, args: string[], env: Record<string, string | undefined>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
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
