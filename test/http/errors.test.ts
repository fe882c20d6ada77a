import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { captureLog } from '../helpers/log-capture.ts'

const SQL_FAILURE = 'SQLITE_CORRUPT: database disk image is malformed in "SELECT id, name FROM pets WHERE id = ?"'

test('an internal failure replies 500 with the Error body and no stack, SQL or library words; the log has it with the request id', async (t) => {
  const log = captureLog()
  const app = await buildTestApp(t, {
    env: { LOG_LEVEL: 'info' },
    logStream: log.stream,
    faults: { beforeStoreCall: (operation) => { if (['listPets', 'createPet', 'createPetIdempotently', 'getPet'].includes(operation)) throw new Error(SQL_FAILURE) } }
  })
  const requests = [
    { url: '/v1/pets', headers: app.auth },
    { method: 'POST' as const, url: '/v1/pets', headers: { ...app.auth, ...json }, payload: '{"name":"Rex","categoryId":7}' },
    { method: 'POST' as const, url: '/v1/pets', headers: { ...app.auth, ...json, 'idempotency-key': 'k' }, payload: '{"name":"Rex","categoryId":7}' },
    { url: '/v1/pets/1', headers: app.auth }
  ]
  for (const [i, request] of requests.entries()) {
    const requestId = `fault-${i}`
    const res = await app.inject({ ...request, headers: { ...request.headers, 'x-request-id': requestId } })
    assertError(res, 500, 'internal', `The request failed on the server (request id ${requestId}).`)
    assert.doesNotMatch(res.body, /SQLITE|SELECT|at .*\.ts/)
    const logged = log.entries().find((entry) => entry.reqId === requestId && entry.level === 50) as { err?: { message: string, stack: string } } | undefined
    assert.equal(logged?.err?.message, SQL_FAILURE, 'the log keeps what went wrong, under the request id')
    assert.match(logged.err.stack, /\n\s+at /)
  }
})
