import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { buildTestApp } from './helpers.ts'

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
  for (const given of ['has space', 'x'.repeat(129), 'quote"d', 'new\u00e9', '']) {
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
  assert.equal(res.statusCode, 500)
  assert.equal(res.headers['x-request-id'], 'req-500-check')
  assert.deepEqual(JSON.parse(res.body), { code: 'internal', message: 'The request failed on the server (request id req-500-check).', status: 500 })
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

test('ordinary X-Request-Ids are kept: a UUID, a traceparent, a hex digest, long ids of one case or of both', async (t) => {
  const { app, auth, lines } = await appWithLog(t)
  const ids = [
    '550e8400-e29b-41d4-a716-446655440000',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '0123456789abcdef'.repeat(4),
    'REQ-' + 'A1B2C3D4'.repeat(8),
    'req_2024-01-01T12:00:00.123Z',
    'Checkout-Service_Order-Lookup-Request-Number-000123'
  ]
  for (const id of ids) {
    const res = await app.inject({ url: '/v1/pets', headers: { ...auth, 'x-request-id': id } })
    assert.equal(res.headers['x-request-id'], id)
    assert.equal(lines.filter((l) => l.msg === 'request').at(-1)?.reqId, id)
  }
})
