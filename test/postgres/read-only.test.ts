import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { buildApp } from '../../src/app.ts'
import { openStore } from '../../src/store/index.ts'
import { issueKey, json, testConfig } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { captureLog } from '../helpers/log-capture.ts'
import { TEST_DATABASE_URL } from '../helpers/pg-schema.ts'

const FAILED_CREATES = 10

test('a database that turns read-only: creates get 503 with Retry-After, /readyz fails, one error line; writable again, it heals without a restart', async (t) => {
  // A database of its own: read-only is set per database, for the sessions that start after.
  const database = `petstore_read_only_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  t.after(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
  })
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${database}`
  const store = await openStore(url.toString())
  await store.migrate()
  const { key } = await issueKey(store)
  const log = captureLog()
  const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'info' }), store, logStream: log.stream })
  t.after(() => app.close())
  const create = (name: string) => app.inject({ method: 'POST', url: '/v1/pets', headers: { authorization: `Bearer ${key}`, ...json }, payload: JSON.stringify({ name, categoryId: 7 }) })
  const readyz = () => app.inject({ method: 'GET', url: '/readyz' })
  /** Sets the database read-only or back, and ends the sessions open on it: the pool opens new ones. */
  const setReadOnly = async (on: boolean) => {
    await admin.query(`ALTER DATABASE ${database} SET default_transaction_read_only = ${on ? 'on' : 'off'}`)
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database])
    // The pool drops the ended connections as their sockets close.
    await sleep(300)
  }

  const first = await create('Rex')
  assert.equal(first.statusCode, 201)
  await setReadOnly(true)
  for (let i = 0; i < FAILED_CREATES; i++) {
    const res = await create(`Stuck ${i}`)
    assertError(res, 503, 'unavailable', `The store is unavailable; retry later (request id ${res.headers['x-request-id']}).`, { label: `create ${i}` })
    assert.equal(res.headers['retry-after'], '1')
  }
  assert.deepEqual([(await readyz()).statusCode], [503])
  const read = await app.inject({ method: 'GET', url: `/v1/pets/${first.json().id}`, headers: { authorization: `Bearer ${key}` } })
  assert.equal(read.statusCode, 200, 'reads go on')

  await setReadOnly(false)
  assert.deepEqual((await readyz()).json(), { status: 'ready' })
  assert.equal((await create('Max')).statusCode, 201)
  const entries = log.entries()
  const problems = entries.filter((entry) => Number(entry.level) >= 40)
  assert.match(String(problems[0]?.reason), new RegExp(`^PostgreSQL at ${url.hostname}:${url.port || '5432'}/${database} cannot write: cannot execute \\w+ in a read-only transaction$`))
  assert.deepEqual({
    problems: problems.map((entry) => entry.msg),
    stacks: entries.filter((entry) => JSON.stringify(entry).includes('"stack"')).length,
    healed: entries.filter((entry) => entry.msg === 'store writes work again').length
  }, {
    problems: ['store writes are failing: replying 503 until one succeeds'],
    stacks: 0,
    healed: 1
  })
})
