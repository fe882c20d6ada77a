import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { test, type TestContext } from 'node:test'
import type { FastifyRequest } from 'fastify'
import pino from 'pino'
import { BatchedLines, loggerOptions, requestLine as builtRequestLine } from '../../src/http/logging.ts'
import { buildTestApp, json } from '../helpers/app.ts'

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
    [{ ...api.auth, 'x-request-id': 'req-lost' }, '/v1/lost', { reqId: 'req-lost', method: 'GET', route: null, status: 404, keyId: 1, msg: 'request' }]
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

test('never logs the key or the Authorization header, whatever the response', async (t) => {
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

test('the request line is the line pino writes for the same fields, whatever the path holds', () => {
  let written = ''
  const logger = pino({ ...loggerOptions({ LOG_LEVEL: 'info' }), timestamp: () => ',"time":0' }, { write: (line: string) => { written += line } })
  const hostile = '/v1/pets/"quoted"\\back\u0000\u001f\u2028é😀'
  const cases = [
    { id: 'req-1', method: 'GET', url: `${hostile}?secret=1`, routeOptions: { url: '/v1/pets/:petId' }, apiKeyId: 7 },
    { id: '0b9c8a1e-1111-4222-8333-444455556666', method: 'POST', url: '/v1/pets', routeOptions: { url: '/v1/pets' }, apiKeyId: undefined },
    { id: 'req-3.retry:2_b', method: 'M-SEARCH', url: '/nowhere', routeOptions: { url: undefined }, apiKeyId: undefined }
  ]
  for (const request of cases) {
    written = ''
    logger.info({
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      path: request.url.split('?', 1)[0],
      status: 418,
      durationMs: 1.23,
      keyId: request.apiKeyId ?? null
    }, 'request')
    const built = builtRequestLine(request as unknown as FastifyRequest, 418, 1.2345)
    assert.equal(built.replace(/"time":\d+/, '"time":0'), written)
  }
})

test('log lines wait in one string until the batch is full, the interval passes or the process exits', async () => {
  const handed: string[] = []
  let flushedSync = 0
  const lines = new BatchedLines({ write: (data) => { handed.push(data.toString()); return true }, flushSync: () => { flushedSync++ } }, 10, 20)
  lines.write('abc\n')
  lines.write('def\n')
  assert.deepEqual(handed, [], 'under the batch size, nothing is written yet')
  lines.write('ghi\n')
  assert.deepEqual(handed, ['abc\ndef\nghi\n'], 'the full batch goes out in one write')
  lines.write('jkl\n')
  await new Promise((resolve) => setTimeout(resolve, 60))
  assert.deepEqual(handed, ['abc\ndef\nghi\n', 'jkl\n'], 'a line waits no longer than the interval')
  lines.write('mno\n')
  lines.flushSync()
  assert.deepEqual(handed, ['abc\ndef\nghi\n', 'jkl\n', 'mno\n'])
  assert.equal(flushedSync, 1)
})

test('below the info level no request line is written', async (t) => {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (chunk: Buffer) => { text += chunk })
  const api = await buildTestApp(t, { env: { LOG_LEVEL: 'warn' }, logStream: stream })
  assert.equal((await api.inject({ url: '/v1/pets', headers: api.auth })).statusCode, 200)
  assert.equal((await api.inject({ url: '/v1/pets' })).statusCode, 401)
  api.app.log.warn('a warning')
  assert.deepEqual(text.split('\n').filter(Boolean).map((line) => JSON.parse(line).msg), ['a warning'])
})

test('lines still waiting are written when the process exits, also on an uncaught error', () => {
  const logging = new URL('../../src/http/logging.ts', import.meta.url).href
  for (const ending of ['process.exit(0)', 'throw new Error(\'fatal\')']) {
    const script = `import { batchedStdout } from '${logging}'; const out = batchedStdout(); out.write('first\\n'); out.write('second\\n'); ${ending}`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    assert.equal(run.stdout, 'first\nsecond\n', `${ending}: ${run.stderr}`)
  }
})

test('lines reach standard output in the order written, also at an exit while the thread pool is busy', () => {
  const logging = new URL('../../src/http/logging.ts', import.meta.url).href
  // A full batch, then lines still waiting, then the exit, while libuv's one thread hashes (as
  // SQLite's syncs take the pool): a batch handed to a write on the pool would still be waiting
  // there when the exit writes the rest.
  const script = `import { pbkdf2 } from 'node:crypto'; import { batchedStdout } from '${logging}'
    pbkdf2('x', 'y', 5_000_000, 32, 'sha256', () => {})
    const out = batchedStdout()
    for (let i = 0; i < 50; i++) out.write(String(i).padEnd(99, '.') + '\\n')
    out.write('last\\n')
    process.exit(0)`
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, UV_THREADPOOL_SIZE: '1' } })
  assert.deepEqual(run.stdout.split('\n').map((line) => line.split('.')[0]), [...Array.from({ length: 50 }, (_, i) => String(i)), 'last', ''], run.stderr)
})
