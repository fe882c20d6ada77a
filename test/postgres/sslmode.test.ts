import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectClient, parsePostgresUrl } from '../../src/store/postgres/pool.ts'
import { Connections } from '../../src/store/postgres/pooled-connections.ts'
import { freePort } from '../helpers/haproxy.ts'
import { canRunClusters, queryNode, startPrimary, type PgNode } from '../helpers/postgres-cluster.ts'

/*
 * DATABASE_URL's sslmode against a PostgreSQL of this test's own (test/helpers/postgres-cluster.ts),
 * first without TLS (ssl = off, as pg_auto_failover's --no-ssl nodes), then with TLS on a
 * certificate for the name localhost signed by a CA the test makes: each mode connects as
 * libpq's does, or fails with the reason. Both of the service's ways to connect are asked, the
 * pool requests use and the connection of migrations and of the first-key lock, and each says
 * whether its session is encrypted (pg_stat_ssl).
 */

const clustersMissing = canRunClusters()
const skip = clustersMissing !== undefined && process.env.CI !== 'true' ? clustersMissing : false

const OPTIONS = { connectTimeoutMs: 3000, statementTimeoutMs: 5000 }
const SSL_OF_SESSION = 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'

/** 'TLS' or 'plain text' for a session of each way to connect; else the reason it failed. */
async function sessionOf (url: string): Promise<{ pool: string, migration: string }> {
  const target = parsePostgresUrl(url)
  const what = (rows: Array<{ ssl: boolean }>) => rows[0]?.ssl ? 'TLS' : 'plain text'
  const connections = new Connections(target, OPTIONS)
  const pool = await connections.query<{ ssl: boolean }>(SSL_OF_SESSION).then(({ rows }) => what(rows), (error: Error) => error.message)
  await connections.close()
  const migration = await connectClient(target, OPTIONS).then(async (client) => {
    try {
      return what((await client.query<{ ssl: boolean }>(SSL_OF_SESSION)).rows)
    } finally {
      await client.end()
    }
  }, (error: Error) => error.message)
  return { pool, migration }
}

async function sessionsOf (urls: Record<string, string>): Promise<Record<string, { pool: string, migration: string }>> {
  const found: Record<string, { pool: string, migration: string }> = {}
  for (const [name, url] of Object.entries(urls)) found[name] = await sessionOf(url)
  return found
}

const both = (outcome: string) => ({ pool: outcome, migration: outcome })

/** A CA, a server certificate for localhost that it signs, and another CA; in a folder owned by postgres. */
function certificates (t: TestContext): { ca: string, otherCa: string, cert: string, key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-tls-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const at = (name: string) => join(dir, name)
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  openssl(['req', '-x509', ...ec, '-days', '2', '-subj', '/CN=petstore test CA', '-keyout', 'ca.key', '-out', 'ca.pem'])
  openssl(['req', '-x509', ...ec, '-days', '2', '-subj', '/CN=another CA', '-keyout', 'other-ca.key', '-out', 'other-ca.pem'])
  openssl(['req', ...ec, '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr'])
  writeFileSync(at('server.ext'), 'subjectAltName = DNS:localhost\n')
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'server.ext', '-out', 'server.crt'])
  // PostgreSQL reads the key only when it belongs to its user and no one else may read it.
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
  for (const path of [dir, at('server.crt'), at('server.key')]) chownSync(path, uid, gid)
  chmodSync(at('server.key'), 0o600)
  return { ca: at('ca.pem'), otherCa: at('other-ca.pem'), cert: at('server.crt'), key: at('server.key') }
}

/** Sets ssl (and the files) with ALTER SYSTEM, reloads, and waits until a new session sees it. */
async function setTls (node: PgNode, settings: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(settings)) await queryNode(node, `ALTER SYSTEM SET ${name} = '${value}'`)
  await queryNode(node, 'SELECT pg_reload_conf()')
  const deadline = Date.now() + 10_000
  while ((await queryNode<{ ssl: string }>(node, 'SHOW ssl'))[0]!.ssl !== settings.ssl) {
    if (Date.now() > deadline) assert.fail(`ssl is not ${settings.ssl} after a reload:\n${node.log()}`)
    await sleep(50)
  }
}

test('each sslmode against a server without TLS and with it: prefer uses TLS when offered and plain text otherwise, require uses TLS without checking the certificate unless sslrootcert names a CA, verify-ca and verify-full check it, disable never uses TLS; in the pool and the migration connection alike', { skip, timeout: 120_000 }, async (t) => {
  if (clustersMissing !== undefined) assert.fail(`cannot start PostgreSQL servers of the test's own: ${clustersMissing}`)
  const { ca, otherCa, cert, key } = certificates(t)
  const node = await startPrimary(t)
  // Nothing listens there: a host list whose first host is down, as after a failover.
  const down = await freePort()
  const url = (host: string, query: string) => `postgres://postgres@${host}:${node.port}/postgres${query}`
  const where = `127.0.0.1:${node.port}/postgres`
  const failed = (reason: string) => both(`PostgreSQL at ${where} is unavailable: ${reason}`)
  const listFailed = (reason: string) => both(`PostgreSQL at 127.0.0.1:${down},${where} is unavailable: no host takes writes: connect ECONNREFUSED 127.0.0.1:${down}; ${reason}`)
  const hostList = (query: string) => `postgres://postgres@127.0.0.1:${down},127.0.0.1:${node.port}/postgres?target_session_attrs=read-write&${query}`

  await setTls(node, { ssl: 'off' })
  const withoutTls = await sessionsOf({
    'no sslmode': url('127.0.0.1', ''),
    disable: url('127.0.0.1', '?sslmode=disable'),
    prefer: url('127.0.0.1', '?sslmode=prefer'),
    'prefer, two hosts, the first down': hostList('sslmode=prefer'),
    require: url('127.0.0.1', '?sslmode=require'),
    'require, two hosts, the first down': hostList('sslmode=require'),
    'verify-ca': url('127.0.0.1', `?sslmode=verify-ca&sslrootcert=${ca}`),
    'verify-full': url('localhost', `?sslmode=verify-full&sslrootcert=${ca}`)
  })
  const refused = 'The server does not support SSL connections'
  assert.deepEqual(withoutTls, {
    'no sslmode': both('plain text'),
    disable: both('plain text'),
    prefer: both('plain text'),
    'prefer, two hosts, the first down': both('plain text'),
    require: failed(refused),
    'require, two hosts, the first down': listFailed(refused),
    'verify-ca': failed(refused),
    'verify-full': both(`PostgreSQL at localhost:${node.port}/postgres is unavailable: ${refused}`)
  }, 'the server without TLS')

  await setTls(node, { ssl_cert_file: cert, ssl_key_file: key, ssl: 'on' })
  const withTls = await sessionsOf({
    'no sslmode': url('127.0.0.1', ''),
    disable: url('127.0.0.1', '?sslmode=disable'),
    prefer: url('127.0.0.1', '?sslmode=prefer'),
    'prefer, two hosts, the first down': hostList('sslmode=prefer'),
    require: url('127.0.0.1', '?sslmode=require'),
    'require, sslrootcert its CA': url('127.0.0.1', `?sslmode=require&sslrootcert=${ca}`),
    'require, sslrootcert another CA': url('127.0.0.1', `?sslmode=require&sslrootcert=${otherCa}`),
    'verify-ca, its CA': url('127.0.0.1', `?sslmode=verify-ca&sslrootcert=${ca}`),
    'verify-ca, another CA': url('127.0.0.1', `?sslmode=verify-ca&sslrootcert=${otherCa}`),
    'verify-full, its CA, its name': url('localhost', `?sslmode=verify-full&sslrootcert=${ca}`),
    'verify-full, its CA, another name': url('127.0.0.1', `?sslmode=verify-full&sslrootcert=${ca}`),
    'verify-full, the system CAs': url('localhost', '?sslmode=verify-full')
  })
  // Node's words for a certificate that no CA it was given signed.
  const untrusted = 'unable to verify the first certificate; if the root CA is installed locally, try running Node.js with --use-system-ca'
  assert.deepEqual(withTls, {
    'no sslmode': both('plain text'),
    disable: both('plain text'),
    prefer: both('TLS'),
    'prefer, two hosts, the first down': both('TLS'),
    require: both('TLS'),
    'require, sslrootcert its CA': both('TLS'),
    'require, sslrootcert another CA': failed(untrusted),
    'verify-ca, its CA': both('TLS'),
    'verify-ca, another CA': failed(untrusted),
    'verify-full, its CA, its name': both('TLS'),
    'verify-full, its CA, another name': failed('Hostname/IP does not match certificate\'s altnames: IP: 127.0.0.1 is not in the cert\'s list: '),
    'verify-full, the system CAs': both(`PostgreSQL at localhost:${node.port}/postgres is unavailable: ${untrusted}`)
  }, 'the server with TLS')
})

test('sslmode=prefer on one pool follows its server\'s TLS setting: turned off, the first new connection fails once and the next ones are plain text; turned on, TLS comes back once a connection to the host breaks', { skip, timeout: 120_000 }, async (t) => {
  if (clustersMissing !== undefined) assert.fail(`cannot start PostgreSQL servers of the test's own: ${clustersMissing}`)
  const { cert, key } = certificates(t)
  const node = await startPrimary(t)
  await setTls(node, { ssl_cert_file: cert, ssl_key_file: key, ssl: 'on' })
  // One pool of one connection, for the whole test: what it learnt of the host is kept between steps.
  const connections = new Connections(parsePostgresUrl(`${node.url}?sslmode=prefer`), { ...OPTIONS, poolMax: 1 })
  t.after(() => connections.close())
  const sessions = async (count: number): Promise<string[]> => {
    const found: string[] = []
    for (let i = 0; i < count; i++) {
      found.push(await connections.query<{ ssl: boolean }>(SSL_OF_SESSION).then(({ rows }) => rows[0]?.ssl ? 'TLS' : 'plain text', (error: Error) => error.message))
    }
    return found
  }
  const poolOf = () => connections.pools().map(({ total, idle }) => ({ total, idle }))
  // The pool's connection closed without an error, as its idle timeout closes it: the next query opens a new one.
  const closeIdle = async () => {
    assert.deepEqual(poolOf(), [{ total: 1, idle: 1 }])
    const client = await connections.pool.connect()
    client.release(true)
    assert.deepEqual(poolOf(), [{ total: 0, idle: 0 }])
  }

  assert.deepEqual(await sessions(2), ['TLS', 'TLS'], 'the server with TLS')

  await setTls(node, { ssl: 'off' })
  // A reload leaves the sessions it has as they are.
  assert.deepEqual(await sessions(1), ['TLS'], 'the session opened before ssl was turned off')
  await closeIdle()
  assert.deepEqual(await sessions(3), [
    `PostgreSQL at 127.0.0.1:${node.port}/postgres is unavailable: The server does not support SSL connections`,
    'plain text',
    'plain text'
  ], 'new connections after ssl was turned off: the failed one has the host asked again')

  await setTls(node, { ssl: 'on' })
  await closeIdle()
  assert.deepEqual(await sessions(2), ['plain text', 'plain text'], 'new connections after ssl was turned on: no connection failed, so the host\'s reply is kept')
  // The pool's connection breaks while idle (as when the server restarts): the host is asked again.
  const [terminated] = await queryNode<{ count: number }>(node, "SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
  assert.deepEqual(terminated, { count: 1 })
  const deadline = Date.now() + 10_000
  while (poolOf()[0]!.total !== 0) {
    if (Date.now() > deadline) assert.fail(`the pool kept its connection after the server ended it: ${JSON.stringify(poolOf())}`)
    await sleep(20)
  }
  assert.deepEqual(await sessions(2), ['TLS', 'TLS'], 'after the pool\'s connection broke, with ssl on')
})
