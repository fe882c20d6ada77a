import assert from 'node:assert/strict'
import { once } from 'node:events'
import type { Socket } from 'node:net'
import { describe, test } from 'node:test'
import Fastify from 'fastify'
import { clientErrorHandler } from '../../src/http/client-errors.ts'
import { limitConnections } from '../../src/http/client-connections.ts'
import { createMetrics } from '../../src/ops/metrics.ts'
import { testConfig } from '../helpers/app.ts'
import { assertError, type ErrorCode } from '../helpers/errors.ts'
import { documentedErrors, exchange, listenTestApp, openSocket, readResponse, sleep, type RawResponse } from '../helpers/raw-http.ts'

/**
 * Every response Fastify or Node produce on their own (parser errors, timeouts, body limits,
 * the 503 while closing) carries the Error body, checked over real HTTP byte by byte.
 */

/** What every JSON response carries, written on the socket or not. */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none';frame-ancestors 'none'"
}

function assertErrorResponse (response: RawResponse, status: number, code: ErrorCode, message: string, url = '/v1/pets', method = 'GET') {
  assertError(response, status, code, message)
  assert.deepEqual(documentedErrors(method, url, response), [])
  const security = Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, response.headers[name]]))
  assert.deepEqual(security, SECURITY_HEADERS)
}

const post = (key: string, body: string, type = 'application/json') =>
  `POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

describe('replies that bypass the error handler still carry the Error body', { timeout: 30_000 }, () => {
  test('malformed JSON is 400 invalid_request', async (t) => {
    const { port, key } = await listenTestApp(t)
    assertErrorResponse(await exchange(port, post(key, '{"name":')), 400, 'invalid_request', 'The request body is not valid JSON: Unexpected end of JSON input', '/v1/pets', 'POST')
  })

  test('prototype-poisoned JSON (__proto__, constructor.prototype) is 400 invalid_request', async (t) => {
    const { port, key } = await listenTestApp(t)
    for (const body of ['{"name":"Rex","categoryId":7,"__proto__":{"admin":true}}', '{"name":"Rex","categoryId":7,"constructor":{"prototype":{"admin":true}}}']) {
      assertErrorResponse(await exchange(port, post(key, body)), 400, 'invalid_request', 'The request body contains a forbidden property name (__proto__ or constructor.prototype).', '/v1/pets', 'POST')
    }
  })

  test('JSON nested thousands deep (it fits in 16 KiB) is 400 invalid_request, not a stack overflow', async (t) => {
    const { port, key } = await listenTestApp(t)
    const deep = '['.repeat(5000) + ']'.repeat(5000)
    assertErrorResponse(await exchange(port, post(key, deep)), 400, 'invalid_request', 'The request body is nested too deeply.', '/v1/pets', 'POST')
  })

  test('a body over 16 KiB is 413, announced by Content-Length or sent chunked', async (t) => {
    const { port, key } = await listenTestApp(t)
    const big = JSON.stringify({ name: 'Rex', categoryId: 7, padding: 'x'.repeat(17_000) })
    assertErrorResponse(await exchange(port, post(key, big)), 413, 'payload_too_large', 'The request body is larger than the limit of 16 KiB.', '/v1/pets', 'POST')
    const chunked = `POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
      `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`
    assertErrorResponse(await exchange(port, chunked), 413, 'payload_too_large', 'The request body is larger than the limit of 16 KiB.', '/v1/pets', 'POST')
  })

  test('a body that is not JSON is 415 unsupported_media_type', async (t) => {
    const { port, key } = await listenTestApp(t)
    assertErrorResponse(await exchange(port, post(key, 'name=Rex', 'application/x-www-form-urlencoded')), 415, 'unsupported_media_type', 'The request body must be application/json.', '/v1/pets', 'POST')
  })

  test('header fields over the limit are 431 headers_too_large, and the connection is closed', async (t) => {
    const { port } = await listenTestApp(t)
    const response = await exchange(port, `GET /v1/pets HTTP/1.1\r\nHost: test\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`)
    assertErrorResponse(response, 431, 'headers_too_large', 'The request line and header fields are larger than the limit.')
    assert.equal(response.headers.connection, 'close')
  })

  test('a request line that is not HTTP is 400 invalid_request', async (t) => {
    const { port } = await listenTestApp(t)
    for (const garbage of ['GARBAGE\r\n\r\n', 'GET /v1/pets HTTP/9.9\r\n\r\n', 'GET /v1/pets HTTP/1.1\r\nBad Header\r\n\r\n']) {
      assertErrorResponse(await exchange(port, garbage), 400, 'invalid_request', 'The request is not valid HTTP/1.1.')
    }
  })

  test('a path that is not valid URL encoding is 400 invalid_request', async (t) => {
    const { port, key } = await listenTestApp(t)
    const response = await exchange(port, `GET /v1/pets/%zz HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    assertErrorResponse(response, 400, 'invalid_request', 'The request path is not a valid URL path for this service.', '/v1/pets/%zz')
  })

  test('CONNECT is 405 method_not_allowed with the Error body and an empty Allow, and the connection is closed', async (t) => {
    const { port } = await listenTestApp(t)
    const socket = await openSocket(port)
    t.after(() => socket.destroy())
    const closed = new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true))
      setTimeout(() => resolve(false), 5000)
    })
    const response = readResponse(socket)
    socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    const refused = await response
    assertErrorResponse(refused, 405, 'method_not_allowed', 'CONNECT is not allowed: this service is not a proxy.', 'example.com:443', 'CONNECT')
    assert.deepEqual({ allow: refused.headers.allow, connection: refused.headers.connection, closed: await closed }, { allow: '', connection: 'close', closed: true })
  })

  test('headers that never finish are 408 request_timeout after HEADERS_TIMEOUT_MS', async (t) => {
    const { port } = await listenTestApp(t, { env: { HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '600', CONNECTIONS_CHECK_INTERVAL_MS: '50' } })
    const started = Date.now()
    const response = await exchange(port, 'GET /v1/pets HTTP/1.1\r\nHost: test\r\n')
    assertErrorResponse(response, 408, 'request_timeout', 'The request was not received completely in time.')
    assert.equal(response.headers.connection, 'close')
    assert.ok(Date.now() - started < 3000, `cut after ${Date.now() - started} ms`)
  })

  test('a body sent one byte at a time is 408 request_timeout after REQUEST_TIMEOUT_MS', async (t) => {
    const { port, key } = await listenTestApp(t, { env: { HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '600', CONNECTIONS_CHECK_INTERVAL_MS: '50' } })
    const socket = await openSocket(port)
    t.after(() => socket.destroy())
    socket.on('error', () => {})
    const response = readResponse(socket)
    socket.write(`POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`)
    const trickle = setInterval(() => { if (!socket.destroyed) socket.write('x') }, 50)
    t.after(() => clearInterval(trickle))
    assertErrorResponse(await response, 408, 'request_timeout', 'The request was not received completely in time.', '/v1/pets', 'POST')
  })

  test('a request arriving on an open connection once close() has begun is 503 unavailable; the one in flight completes', async (t) => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => { release = resolve })
    // After hooks run in order: the held request must be let go before the app closes.
    t.after(() => release())
    const { app, port, key } = await listenTestApp(t, {
      faults: { beforeStoreCall: async (operation) => { if (operation === 'getPet') await held } }
    })
    const inFlight = await openSocket(port)
    const late = await openSocket(port)
    t.after(() => { inFlight.destroy(); late.destroy() })
    const inFlightResponse = readResponse(inFlight)
    inFlight.write(`GET /v1/pets/1 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    // Half a request: the connection is busy, so close() leaves it open.
    late.write('GET /v1/pets HTTP/1.1\r\nHost: test\r\n')
    await sleep(100)
    const closed = app.close()
    await sleep(100)
    const lateResponse = readResponse(late)
    late.write(`Authorization: Bearer ${key}\r\nOrigin: https://example.com\r\n\r\n`)
    const refused = await lateResponse
    const requestId = refused.headers['x-request-id']
    assertErrorResponse(refused, 503, 'unavailable', `The server is shutting down; retry the request. (request id ${requestId})`)
    // A page on another origin can read it too, and so when to retry.
    assert.deepEqual([refused.headers.connection, refused.headers['retry-after'], refused.headers['access-control-allow-origin']], ['close', '1', '*'])
    release()
    const completed = await inFlightResponse
    assertErrorResponse(completed, 404, 'not_found', 'No pet has id 1.', '/v1/pets/1')
    await closed
  })

  test('a request the parser rejects while a response is being sent on its connection adds no bytes to it; once that response is done, it gets its 400', async (t) => {
    let release = () => {}
    const held = new Promise<void>((resolve) => { release = resolve })
    const app = Fastify({ clientErrorHandler })
    app.decorate('config', testConfig())
    app.decorate('metrics', createMetrics('sqlite'))
    await app.register(limitConnections)
    app.get('/done', async () => 'done')
    // A response whose head and first bytes are out, and whose rest waits.
    app.get('/slow', (_request, reply) => {
      reply.hijack()
      reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' })
      reply.raw.write('part-')
      held.then(() => reply.raw.end('rest!'), () => {})
    })
    t.after(async () => { release(); await app.close() })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }

    const midResponse = await openSocket(port)
    t.after(() => midResponse.destroy())
    const received = collect(midResponse)
    midResponse.write('GET /slow HTTP/1.1\r\nHost: test\r\n\r\n')
    while (!received().endsWith('part-')) await once(midResponse, 'data')
    midResponse.write('GARBAGE\r\n\r\n')
    await once(midResponse, 'close')
    assert.deepEqual({ statusLines: received().match(/^HTTP\/1\.1 \d+/gm), body: received().split('\r\n\r\n')[1] }, { statusLines: ['HTTP/1.1 200'], body: 'part-' })

    const afterResponse = await openSocket(port)
    t.after(() => afterResponse.destroy())
    const first = readResponse(afterResponse)
    afterResponse.write('GET /done HTTP/1.1\r\nHost: test\r\n\r\n')
    assert.equal((await first).body, 'done')
    const second = readResponse(afterResponse)
    afterResponse.write('GARBAGE\r\n\r\n')
    assertErrorResponse(await second, 400, 'invalid_request', 'The request is not valid HTTP/1.1.')
  })
})

/** Everything the socket receives, as text so far. */
function collect (socket: Socket): () => string {
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  return () => text
}
