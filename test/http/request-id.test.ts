import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import type { IncomingMessage } from 'node:http'
import { test } from 'node:test'
import { requestIdOf } from '../../src/http/logging.ts'
import { buildTestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** An app whose log lines are collected as parsed JSON. */
async function appWithLog (t: import('node:test').TestContext) {
  const stream = new PassThrough()
  const lines: Array<Record<string, unknown>> = []
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line))
  })
  const testApp = await buildTestApp(t, { env: { LOG_LEVEL: 'info' }, logStream: stream })
  return { ...testApp, lines }
}

test('a sane X-Request-Id from the caller is kept on the response and in the log line', async (t) => {
  const { app, auth, lines } = await appWithLog(t)
  const id = 'trace-42.abc:DEF_9'
  const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': id } })
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers['x-request-id'], id)
  const line = lines.find((l) => l.msg === 'request')
  assert.equal(line?.reqId, id)
})

test('an insane X-Request-Id is replaced by a generated one, and that one is logged', async (t) => {
  const { app, auth, lines } = await appWithLog(t)
  for (const given of ['has space', 'x'.repeat(129), 'a.'.repeat(64) + 'a', 'quote"d', 'new\u00e9', '']) {
    const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': given } })
    const returned = String(res.headers['x-request-id'])
    assert.match(returned, UUID, `replaced ${JSON.stringify(given)}`)
    assert.equal(lines.filter((l) => l.msg === 'request').at(-1)?.reqId, returned)
  }
})

test('a request without X-Request-Id gets a generated one, different each time', async (t) => {
  const { app } = await appWithLog(t)
  const first = (await app.inject({ url: '/healthz' })).headers['x-request-id']
  const second = (await app.inject({ url: '/healthz' })).headers['x-request-id']
  assert.match(String(first), UUID)
  assert.match(String(second), UUID)
  assert.notEqual(first, second)
})

test('a 5xx names the same request id in its message, on the response and in the log', async (t) => {
  const { app, store, auth, lines } = await appWithLog(t)
  await store.close()
  const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': 'req-500-check' } })
  assertError(res, 500, 'internal', 'The request failed on the server (request id req-500-check).')
  assert.equal(res.headers['x-request-id'], 'req-500-check')
  const failure = lines.find((l) => l.msg === 'request failed')
  assert.equal(failure?.reqId, 'req-500-check')
  assert.equal(lines.find((l) => l.msg === 'request')?.reqId, 'req-500-check')
})

test('an X-Request-Id that is a key in any spelling, or its bare secret, is neither logged nor echoed: a fresh id is', async (t) => {
  const { app, auth, key, lines } = await appWithLog(t)
  const secret = key.slice(4)
  for (const given of [secret, `psk-${secret}`, `PSK_${secret}`, `Psk-${secret.slice(0, 20)}`, `trace.${secret}`, `${secret}:1`]) {
    const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': given } })
    const returned = String(res.headers['x-request-id'])
    assert.match(returned, UUID, `kept ${given}`)
    assert.equal(lines.filter((l) => l.msg === 'request').at(-1)?.reqId, returned)
  }
  assert.ok(!JSON.stringify(lines).includes(secret.slice(0, 20)), 'the log holds the secret')
})

test('an X-Request-Id holding a key\'s secret, however it is wrapped, is neither echoed nor logged: a fresh id is, and no line holds the secret', async (t) => {
  const { app, auth, key, lines } = await appWithLog(t)
  const secret = key.slice(4)
  const wrapped = [
    `req-${secret}`, `${secret}-1`, `${secret}_retry2`, `x${secret}x`, `-${secret}-`, `__${secret}__`,
    `trace.${secret}-retry.2`, `a:b:${secret}-${secret}`, `${secret}${secret}`.slice(0, 128),
    `psk_${secret}`, `id-psk_${secret}`, `XPSK-${secret.slice(0, 10)}`, `req.psk_${secret.slice(0, 5)}`
  ]
  for (const given of wrapped) {
    const before = lines.length
    const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': given } })
    const returned = String(res.headers['x-request-id'])
    assert.match(returned, UUID, `kept ${given}`)
    const logged = lines.slice(before)
    assert.deepEqual(logged.map(({ reqId, msg, path, status }) => ({ reqId, msg, path, status })), [{ reqId: returned, msg: 'request', path: '/v1/pets', status: 200 }])
    for (const text of [returned, JSON.stringify(logged)]) {
      assert.ok(!text.includes(secret.slice(0, 10)) && !text.includes(secret.slice(-10)), `the reply or the log holds the secret of ${given}`)
    }
  }
})

test('an X-Request-Id with a run of 43 or more key characters, or psk_ or psk- anywhere, is replaced even when it holds no key', async (t) => {
  const { app, auth, lines } = await appWithLog(t)
  const refused = [
    'a'.repeat(43),
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '0123456789abcdef'.repeat(4),
    'Checkout-Service_Order-Lookup-Request-Number-000123',
    'psk_1', 'my-PSK-id', 'a.psk-b'
  ]
  for (const given of refused) {
    const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': given } })
    const returned = String(res.headers['x-request-id'])
    assert.match(returned, UUID, `kept ${given}`)
    assert.equal(lines.filter((l) => l.msg === 'request').at(-1)?.reqId, returned)
  }
})

const RUN_OF_42 = 'Ab1-_'.repeat(8) + 'Ab'

test('ordinary X-Request-Ids are kept: a UUID, a ULID, a timestamped id, runs of up to 42 key characters, 128 characters in all', async (t) => {
  const { app, auth, lines } = await appWithLog(t)
  const ids = [
    '550e8400-e29b-41d4-a716-446655440000',
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    'req_2024-01-01T12:00:00.123Z',
    'Checkout.Order-Lookup:Request-Number-000123',
    'psk',
    'a'.repeat(42),
    `${RUN_OF_42}.${RUN_OF_42}:${RUN_OF_42}`
  ]
  assert.equal(ids.at(-1)!.length, 128)
  for (const id of ids) {
    const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': id } })
    assert.equal(res.headers['x-request-id'], id)
    assert.equal(lines.filter((l) => l.msg === 'request').at(-1)?.reqId, id)
  }
})

test('every id the service keeps or makes is written into JSON as it is: nothing in it needs escaping', () => {
  // The request line writes the id without escaping it (src/http/logging.ts): hostile ids are
  // replaced, the kept ones hold nothing JSON escapes.
  const given = ['req-"quoted"', 'back\\slash', 'tab\there', 'line\nbreak', 'nul\u0000', 'é-accent', 'emoji-😀', 'sep\u2028', 'ok-id_1.2:3', '0b9c8a1e-1111-4222-8333-444455556666', '', ' ']
  for (const id of given) {
    const kept = requestIdOf({ headers: { 'x-request-id': id } } as unknown as IncomingMessage)
    assert.equal(JSON.stringify(kept), `"${kept}"`, `${JSON.stringify(id)} became ${JSON.stringify(kept)}`)
  }
  const made = requestIdOf({ headers: {} } as unknown as IncomingMessage)
  assert.equal(JSON.stringify(made), `"${made}"`)
})
