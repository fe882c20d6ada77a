import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { loadMigrations } from '../src/store/migrations.ts'
import { assertError, fetchedReply } from './helpers/errors.ts'
import { logLines, runCli, runToExit, startServer, stopProcess, tempDir, type ServerProcess } from './helpers/processes.ts'

describe('the server process, end to end over real HTTP', () => {
  test('listens on port 0, writes the first key to its file only, and a second start makes no other key', async (t) => {
    const dir = join(tempDir(t), 'fresh')
    const databaseUrl = `sqlite:${join(dir, 'petstore.db')}`
    const first = await startServer(t, { DATABASE_URL: databaseUrl })
    assert.notEqual(new URL(first.url).port, '0')

    const key = readFileSync(join(dir, 'first-api-key'), 'utf8').trim()
    assert.ok(!first.stderr().includes(key.slice(12)), 'stderr never holds the key')
    const authorization = `Bearer ${key}`

    const created = await fetch(`${first.url}/v1/pets`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":9223372036854775807}' })
    assert.equal(created.status, 201)
    const body = await created.text()
    const { id } = JSON.parse(body)
    assert.equal(body, `{"id":${id},"name":"Rex","categoryId":9223372036854775807}`)
    assert.equal(created.headers.get('location'), `${first.url}/v1/pets/${id}`)
    const fetched = await fetch(created.headers.get('location')!, { headers: { authorization } })
    assert.equal(fetched.status, 200)
    assert.equal(await fetched.text(), body)
    assert.equal(fetched.headers.get('sunset'), 'Thu, 05 Dec 2030 00:00:00 GMT')
    const refused = await fetch(`${first.url}/v1/pets`)
    assertError(await fetchedReply(refused), 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')
    await stopProcess(first.child)

    assert.ok(!first.stdout().includes(key.slice(12)), 'the stdout log never holds the key')
    const announced = logLines(first).filter((line) => String(line.msg).startsWith('created the first API key'))
    assert.deepEqual(announced.map((line) => line.prefix), [key.slice(0, 12)])
    const migrated = (server: ServerProcess) => logLines(server).filter((line) => line.msg === 'migrations applied').map((line) => line.migrations)
    assert.deepEqual(migrated(first), [loadMigrations('sqlite').map(({ version, name }) => `${String(version).padStart(3, '0')}-${name}`)])

    // An upgrade that still sets a setting under its old name: read, and one warning at start.
    const second = await startServer(t, { DATABASE_URL: databaseUrl, ANSWER_CACHE_ENTRIES: '5' })
    assert.doesNotMatch(second.stderr(), /first API key/)
    const listed = await fetch(`${second.url}/v1/pets`, { headers: { authorization } })
    assert.equal(listed.status, 200, 'the first key still works')
    assert.equal(await listed.text(), `[${body}]`)
    await stopProcess(second.child)
    assert.deepEqual(migrated(second), [], 'the second start applies nothing and says nothing of it')
    const renamed = (server: ServerProcess) => logLines(server).filter((line) => 'renamedTo' in line).map(({ level, setting, renamedTo, msg }) => ({ level, setting, renamedTo, msg }))
    assert.deepEqual(renamed(first), [])
    assert.deepEqual(renamed(second), [{ level: 40, setting: 'ANSWER_CACHE_ENTRIES', renamedTo: 'REPLY_CACHE_ENTRIES', msg: 'ANSWER_CACHE_ENTRIES is now named REPLY_CACHE_ENTRIES; the old name is still read while REPLY_CACHE_ENTRIES is unset' }])
    const keys = await runCli(['keys', 'list', '--json'], { DATABASE_URL: databaseUrl })
    assert.deepEqual(JSON.parse(keys.stdout).map((k: { name: string }) => k.name), ['first key'])
  })
})

describe('start-up with a bad setting', () => {
  test('exits 1 with one line naming what is wrong, and serves nothing', async (t) => {
    const dir = tempDir(t)
    const aFile = join(dir, 'a-file')
    writeFileSync(aFile, 'not a directory')
    const notSqlite = join(dir, 'notes.txt')
    writeFileSync(notSqlite, 'plain text, not a database, '.repeat(10))
    const aDirectory = join(dir, 'a-directory')
    mkdirSync(aDirectory)
    const cases: Array<[setting: string, env: Record<string, string>, line: string]> = [
      ['DATABASE_URL of an unknown scheme', { DATABASE_URL: 'mysql://db/petstore' }, 'DATABASE_URL must start with sqlite: or postgres://, got "mysql://db/petstore"'],
      ['DATABASE_URL sqlite: without a path', { DATABASE_URL: 'sqlite:' }, 'DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/petstore.db'],
      ['DATABASE_URL under a regular file', { DATABASE_URL: `sqlite:${aFile}/petstore.db` }, `DATABASE_URL sqlite:${aFile}/petstore.db cannot be opened: EEXIST: file already exists, mkdir '${aFile}'`],
      ['DATABASE_URL naming a directory', { DATABASE_URL: `sqlite:${aDirectory}` }, `DATABASE_URL sqlite:${aDirectory} cannot be opened: unable to open database file`],
      ['DATABASE_URL naming a file that is not SQLite', { DATABASE_URL: `sqlite:${notSqlite}` }, `DATABASE_URL sqlite:${notSqlite} cannot be opened: file is not a database`],
      ['PORT not a number (every variable: config.test.ts)', { PORT: 'http' }, 'PORT must be a whole number, got "http"']
    ]
    for (const [setting, env, line] of cases) {
      await t.test(setting, async () => {
        const run = await runToExit(['src/server.ts'], { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'unused.db')}`, ...env })
        assert.equal(run.code, 1)
        assert.equal(run.stderr, `petstore: cannot start: ${line}\n`)
        assert.equal(run.stdout, '')
      })
    }
  })
})

describe('an uncaught error in the running server', () => {
  test('closes without a drain and exits 1, the error in the log at fatal and no stack on stderr', async (t) => {
    const dir = tempDir(t)
    const server = new URL('../src/server.ts', import.meta.url).href
    // Thrown outside any request, as a bug in a timer would be.
    const script = `import { serve } from '${server}'; await serve(process.env); setTimeout(() => { throw new Error('a bug outside any request') }, 0)`
    const run = await runToExit(['--input-type=module', '-e', script], {
      PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}`, SHUTDOWN_DRAIN_MS: '5000'
    })
    assert.equal(run.code, 1)
    assert.equal(run.stderr.includes('a bug outside any request'), false, run.stderr)
    const lines = run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
    const fromTheError = lines.slice(lines.findIndex((line) => line.level === 60))
    assert.deepEqual(fromTheError.map((line) => [line.level, line.msg, (line.err as { message?: string } | undefined)?.message]), [
      [60, 'uncaught error: closing without a drain', 'a bug outside any request'],
      [30, 'closing: no new connections, finishing requests in flight', undefined]
    ])
  })
})
