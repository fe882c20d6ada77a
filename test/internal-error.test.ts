import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { buildApp } from '../src/app.ts'
import type { Store } from '../src/store/types.ts'
import { createTestStore, injectChecked, issueKey, json, testConfig } from './helpers.ts'

const LEAK = 'SQLITE_IOERR: disk I/O error in INSERT INTO pets (name, category_id) at /var/lib/petstore/petstore.db'

/** The real store, except that the chosen operations fail the way a broken disk would. */
function failing (store: Store, operations: Array<keyof Store>): Store {
  return new Proxy(store, {
    get (target, property) {
      if (operations.includes(property as keyof Store)) return async () => { throw new Error(LEAK) }
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

test('a failure inside the service replies 500 internal naming the request id; the detail goes to the log only', async (t) => {
  const { store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const stream = new PassThrough()
  let log = ''
  stream.on('data', (chunk: Buffer) => { log += chunk })
  const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'info' }), store: failing(store, ['createPet', 'listPets', 'getPet']), logStream: stream })
  t.after(async () => { await app.close(); await cleanup() })

  const requests = [
    { method: 'POST' as const, url: '/v1/pets', payload: '{"name":"Rex","categoryId":7}' },
    { method: 'GET' as const, url: '/v1/pets' },
    { method: 'GET' as const, url: '/v1/pets/1' }
  ]
  for (const [index, request] of requests.entries()) {
    const requestId = `broken-${index}`
    const res = await injectChecked(app, { ...request, headers: { authorization: `Bearer ${key}`, ...json, 'x-request-id': requestId } })
    assert.equal(res.statusCode, 500)
    assert.deepEqual(res.json(), { code: 'internal', message: `The request failed on the server (request id ${requestId}).`, status: 500 })
    assert.doesNotMatch(res.body, /SQLITE|INSERT|\/var\/lib|at .*\.ts/)
    const logged = log.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((line) => line.reqId === requestId && line.level === 50)
    assert.equal(logged?.err?.message, LEAK, 'the log keeps what went wrong, under the request id')
  }
})
