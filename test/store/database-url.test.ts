import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { clientClassOf } from '../../src/store/postgres/primary.ts'
import { TlsIfOfferedClient } from '../../src/store/postgres/tls.ts'
import { parsePostgresUrl } from '../../src/store/postgres/url.ts'
import { runCli, runToExit } from '../helpers/processes.ts'
import { startTcpProxy } from '../helpers/tcp-proxy.ts'

/*
 * A bad or unreachable DATABASE_URL / REDIS_URL stops the CLI and the server with one line on
 * stderr, exit code 1, within the connect timeout. Nothing here needs a database: the
 * unreachable one is a local TCP proxy that resets or swallows every connection.
 */

const startServerToExit = (env: Record<string, string>) => runToExit(['src/server.ts'], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env })

test('a DATABASE_URL that is not a URL stops the CLI and the server with one line naming it, password masked', async () => {
  const env = { DATABASE_URL: 'postgres://admin:s3cret@db.example:port/petstore' }
  assert.deepEqual(await runCli(['migrate'], env), {
    code: 1, stdout: '', stderr: 'petstore migrate: DATABASE_URL is not a valid postgres:// URL: "postgres://admin:***@db.example:port/petstore"\n'
  })
  assert.deepEqual(await startServerToExit(env), {
    code: 1, stdout: '', stderr: 'petstore: cannot start: DATABASE_URL is not a valid postgres:// URL: "postgres://admin:***@db.example:port/petstore"\n'
  })
  assert.deepEqual(await runCli(['keys', 'list'], { DATABASE_URL: 'postgres://127.0.0.1/test?schema=Bad-Name' }), {
    code: 1, stdout: '', stderr: 'petstore keys list: DATABASE_URL schema must be a lower-case identifier (a-z, 0-9, _), got "Bad-Name"\n'
  })
})

test('an unreachable PostgreSQL stops the CLI and the server with one line within the connect timeout', async (t) => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 9 })
  t.after(() => proxy.close())
  const url = `postgres://postgres@127.0.0.1:${proxy.port}/test`
  const where = `PostgreSQL at 127.0.0.1:${proxy.port}/test is unavailable`

  proxy.setMode('refuse')
  const cli = await runCli(['keys', 'list'], { DATABASE_URL: url })
  assert.deepEqual({ code: cli.code, stdout: cli.stdout }, { code: 1, stdout: '' })
  assert.match(cli.stderr, new RegExp(`^petstore keys list: ${where}: [^\\n]+\\n$`))
  const server = await startServerToExit({ DATABASE_URL: url })
  assert.deepEqual({ code: server.code, stdout: server.stdout }, { code: 1, stdout: '' })
  assert.match(server.stderr, new RegExp(`^petstore: cannot start: ${where}: [^\\n]+\\n$`))

  proxy.setMode('blackhole')
  const started = performance.now()
  const silent = await startServerToExit({ DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: '300' })
  assert.deepEqual(silent, { code: 1, stdout: '', stderr: `petstore: cannot start: ${where}: no connection within 300 ms (DATABASE_CONNECT_TIMEOUT_MS)\n` })
  assert.ok(performance.now() - started < 15_000)
})

test('a bad or unreachable REDIS_URL stops the server with one line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-url-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const DATABASE_URL = `sqlite:${join(dir, 'petstore.db')}`
  assert.deepEqual(await startServerToExit({ DATABASE_URL, REDIS_URL: 'localhost:6379' }), {
    code: 1, stdout: '', stderr: 'petstore: cannot start: REDIS_URL must be a redis:// or rediss:// URL, got "localhost:6379"\n'
  })

  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 9 })
  t.after(() => proxy.close())
  const REDIS_URL = `redis://:pw@127.0.0.1:${proxy.port}`
  proxy.setMode('blackhole')
  assert.deepEqual(await startServerToExit({ DATABASE_URL, REDIS_URL, REDIS_TIMEOUT_MS: '300' }), {
    code: 1, stdout: '', stderr: `petstore: cannot start: REDIS_URL "redis://:***@127.0.0.1:${proxy.port}" is unreachable: no response within 300 ms\n`
  })
  proxy.setMode('refuse')
  const refused = await startServerToExit({ DATABASE_URL, REDIS_URL, REDIS_TIMEOUT_MS: '300' })
  assert.deepEqual({ code: refused.code, stdout: refused.stdout }, { code: 1, stdout: '' })
  assert.match(refused.stderr, new RegExp(`^petstore: cannot start: REDIS_URL "redis://:\\*\\*\\*@127\\.0\\.0\\.1:${proxy.port}" is unreachable: [^\\n]+\\n$`))
})

/** What a client of the service gets from a DATABASE_URL, in libpq's terms (no connection is made). */
function tlsOf (url: string): string {
  const target = parsePostgresUrl(url)
  const client = new (clientClassOf(target))({ connectionString: target.connectionString })
  const ssl = client.ssl as boolean | { rejectUnauthorized?: boolean, ca?: string, checkServerIdentity?: unknown }
  if (!ssl) return 'plain text'
  const checked = ssl === true || ssl.rejectUnauthorized !== false
  const against = ssl !== true && ssl.ca !== undefined ? 'sslrootcert' : 'the system\'s CAs'
  const certificate = !checked
    ? 'certificate not checked'
    : ssl !== true && typeof ssl.checkServerIdentity === 'function' ? `certificate checked against ${against}, host name not` : `certificate and host name checked against ${against}`
  return `TLS, ${certificate}${client instanceof TlsIfOfferedClient ? '; plain text when the server has none' : ''}`
}

test('sslmode means what it means to libpq: prefer is TLS when the server offers it and plain text when it has none, require is TLS without checking the certificate unless sslrootcert names a CA, disable is plain text', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-sslmode-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  // pg reads the file when a client is made; it is parsed as a certificate only on connecting.
  const ca = join(dir, 'ca.pem')
  writeFileSync(ca, 'a CA certificate\n')
  const base = 'postgres://app@db1:5432/petstore'
  const of = (query: string) => tlsOf(`${base}${query}`)
  assert.deepEqual({
    'no sslmode': of(''),
    disable: of('?sslmode=disable'),
    prefer: of('?sslmode=prefer'),
    require: of('?sslmode=require'),
    'require, sslrootcert': of(`?sslmode=require&sslrootcert=${ca}`),
    'verify-ca, sslrootcert': of(`?sslmode=verify-ca&sslrootcert=${ca}`),
    'verify-full': of('?sslmode=verify-full'),
    'verify-full, sslrootcert': of(`?sslmode=verify-full&sslrootcert=${ca}`),
    'no-verify (node-postgres)': of('?sslmode=no-verify'),
    'pg_autoctl show uri': tlsOf('postgres://postgres@db1:5432,db2:5432/postgres?target_session_attrs=read-write&sslmode=prefer'),
    'several hosts, require': tlsOf('postgres://postgres@db1:5432,db2:5432/postgres?target_session_attrs=read-write&sslmode=require&schema=petstore')
  }, {
    'no sslmode': 'plain text',
    disable: 'plain text',
    prefer: 'TLS, certificate not checked; plain text when the server has none',
    require: 'TLS, certificate not checked',
    'require, sslrootcert': 'TLS, certificate checked against sslrootcert, host name not',
    'verify-ca, sslrootcert': 'TLS, certificate checked against sslrootcert, host name not',
    'verify-full': 'TLS, certificate and host name checked against the system\'s CAs',
    'verify-full, sslrootcert': 'TLS, certificate and host name checked against sslrootcert',
    'no-verify (node-postgres)': 'TLS, certificate not checked',
    'pg_autoctl show uri': 'TLS, certificate not checked; plain text when the server has none',
    'several hosts, require': 'TLS, certificate not checked'
  })

  // What pg is handed for each host: libpq's meaning asked for with uselibpqcompat=true.
  assert.deepEqual(parsePostgresUrl('postgres://postgres@db1:5432,db2:5433/postgres?target_session_attrs=read-write&sslmode=prefer&schema=petstore'), {
    connectionString: 'postgres://postgres@db1:5432/postgres?sslmode=prefer&uselibpqcompat=true',
    hosts: [
      { connectionString: 'postgres://postgres@db1:5432/postgres?sslmode=prefer&uselibpqcompat=true', name: 'db1:5432' },
      { connectionString: 'postgres://postgres@db2:5433/postgres?sslmode=prefer&uselibpqcompat=true', name: 'db2:5433' }
    ],
    sessionAttrs: 'read-write',
    schema: 'petstore',
    tlsOptional: true,
    where: 'db1:5432,db2:5433/postgres?schema=petstore'
  })
  assert.deepEqual(parsePostgresUrl(`${base}?sslmode=require`), {
    connectionString: `${base}?sslmode=require&uselibpqcompat=true`,
    hosts: [{ connectionString: `${base}?sslmode=require&uselibpqcompat=true`, name: 'db1:5432' }],
    schema: undefined,
    where: 'db1:5432/petstore'
  })
  assert.deepEqual(parsePostgresUrl(`${base}?sslmode=verify-full`).connectionString, `${base}?sslmode=verify-full`)
})

test('an sslmode the service cannot honour stops the CLI and the server with one line saying what to write instead', async () => {
  const refusals: Array<[string, string]> = [
    ['allow', 'DATABASE_URL sslmode=allow is not supported: write sslmode=prefer (TLS when the server offers it) or sslmode=disable'],
    ['verify-ca', 'DATABASE_URL sslmode=verify-ca needs sslrootcert=FILE, the certificate of the CA that signed the server\'s'],
    ['Require', 'DATABASE_URL sslmode must be disable, prefer, require, verify-ca, verify-full or no-verify, got "Require"']
  ]
  for (const [sslmode, refusal] of refusals) {
    assert.deepEqual(await runCli(['migrate'], { DATABASE_URL: `postgres://app:s3cret@127.0.0.1:9/petstore?sslmode=${sslmode}` }), {
      code: 1, stdout: '', stderr: `petstore migrate: ${refusal}\n`
    }, sslmode)
  }
  assert.deepEqual(await startServerToExit({ DATABASE_URL: 'postgres://app:s3cret@db1:5432,db2:5432/petstore?target_session_attrs=read-write&sslmode=allow' }), {
    code: 1, stdout: '', stderr: `petstore: cannot start: ${refusals[0]![1]}\n`
  })
})
