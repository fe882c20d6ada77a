import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test, type TestContext } from 'node:test'
import { buildTestApp, json } from './helpers.ts'

/** An app whose log lines are kept for the test to read. */
async function appWithLog (t: TestContext) {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (chunk: Buffer) => { text += chunk })
  const api = await buildTestApp(t, { env: { LOG_LEVEL: 'info' }, logStream: stream })
  const lines = () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
  return { ...api, text: () => text, lines }
}

/** The fields of the one line per request that operators rely on. */
function requestLine (line: Record<string, unknown>) {
  return { reqId: line.reqId, method: line.method, route: line.route, status: line.status, keyId: line.keyId, msg: line.msg }
}

test('writes one line per request: request id, method, route template, status, duration, key id', async (t) => {
  const api = await appWithLog(t)
  const created = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json, 'x-request-id': 'req-create' }, payload: '{"name":"Rex","categoryId":7}' })
  const { id } = created.json()
  const requests: Array<[headers: Record<string, string>, url: string, expected: ReturnType<typeof requestLine>]> = [
    [{ ...api.auth, 'x-request-id': 'req-get' }, `/v1/pets/${id}`, { reqId: 'req-get', method: 'GET', route: '/v1/pets/:petId', status: 200, keyId: api.keyId, msg: 'request' }],
    [{ ...api.auth, 'x-request-id': 'req-list' }, '/v1/pets?limit=5&status=sold', { reqId: 'req-list', method: 'GET', route: '/v1/pets', status: 200, keyId: api.keyId, msg: 'request' }],
    [{ ...api.auth, 'x-request-id': 'req-bad' }, '/v1/pets?limit=0', { reqId: 'req-bad', method: 'GET', route: '/v1/pets', status: 400, keyId: api.keyId, msg: 'request' }],
    [{ 'x-request-id': 'req-anon' }, `/v1/pets/${id}`, { reqId: 'req-anon', method: 'GET', route: '/v1/pets/:petId', status: 401, keyId: null, msg: 'request' }],
    [{ ...api.auth, 'x-request-id': 'req-lost' }, '/v1/lost', { reqId: 'req-lost', method: 'GET', route: null, status: 404, keyId: null, msg: 'request' }]
  ]
  for (const [headers, url] of requests) await api.inject({ url, headers })

  const lines = api.lines().filter((line) => line.msg === 'request')
  assert.deepEqual(lines.map(requestLine), [
    { reqId: 'req-create', method: 'POST', route: '/v1/pets', status: 201, keyId: api.keyId, msg: 'request' },
    ...requests.map(([, , expected]) => expected)
  ])
  for (const line of lines) {
    assert.equal(typeof line.durationMs, 'number')
    assert.ok((line.durationMs as number) >= 0)
  }
})

test('a request id the caller does not send is made up and returned in X-Request-Id', async (t) => {
  const api = await appWithLog(t)
  const res = await api.inject({ url: '/v1/pets', headers: api.auth })
  const [line] = api.lines().filter((l) => l.msg === 'request')
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/)
  assert.equal(line?.reqId, res.headers['x-request-id'])
})

test('never logs the key or the Authorization header, whatever the answer', async (t) => {
  const api = await appWithLog(t)
  const unknown = 'psk_' + 'Z'.repeat(43)
  await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: '{"name":"Rex","categoryId":7}' })
  await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: '{"name":' })
  await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'text/plain' }, payload: 'Rex' })
  await api.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${unknown}` } })
  await api.inject({ url: '/v1/pets', headers: { authorization: `Basic ${api.key}` } })
  const text = api.text()
  assert.equal(api.lines().filter((line) => line.msg === 'request').length, 5)
  for (const secret of [api.key, api.key.slice(12), unknown, 'Bearer']) {
    assert.ok(!text.includes(secret), `the log holds ${secret}`)
  }
  assert.doesNotMatch(text, /authorization/i)
})
