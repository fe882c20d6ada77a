import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { openStore } from '../../src/store/index.ts'
import { tempDir } from '../helpers/processes.ts'
import { issueKey, json, testConfig } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

test('a create while another process holds the SQLite write lock gets 503 unavailable, then works once it is released', async (t) => {
  const path = `${tempDir(t)}/petstore.db`
  const store = await openStore(`sqlite:${path}`)
  await store.migrate()
  const { key } = await issueKey(store)
  const app = await buildApp({ config: testConfig(), store })
  t.after(() => app.close())
  const other = new DatabaseSync(path)
  other.exec('BEGIN IMMEDIATE')
  const create = () => app.inject({ method: 'POST', url: '/v1/pets', headers: { authorization: `Bearer ${key}`, ...json }, payload: '{"name":"Rex","categoryId":7}' })

  const started = performance.now()
  const locked = await create()
  assert.ok(performance.now() - started < 2000, 'refused within the busy timeout, not after a hang')
  assertError(locked, 503, 'unavailable', `The store is unavailable; retry later (request id ${locked.headers['x-request-id']}).`)
  assert.equal(locked.headers['retry-after'], '1')

  other.exec('ROLLBACK')
  other.close()
  const released = await create()
  assert.equal(released.statusCode, 201)
  assert.equal(await store.countPets(), 1)
})
