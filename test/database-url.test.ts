import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli, runToExit } from './processes.ts'
import { startTcpProxy } from './tcp-proxy.ts'

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
