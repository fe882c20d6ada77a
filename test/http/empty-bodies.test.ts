import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { AddressInfo } from 'node:net'
import { buildTestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { exchange, listenTestApp, type RawResponse } from '../helpers/raw-http.ts'

/**
 * Node ends the body stream of a request without Content-Length or Transfer-Encoding at once
 * (optimizeEmptyRequests). Such a request has no body, and must be replied to as the same
 * request with Content-Length: 0 is, also where a body is read: never left waiting for one.
 */

const EMPTY = 'The request body is empty; a JSON object is required.'

/** Status, type and body: what a client sees of a response, without its per-request fields. */
const seen = (response: RawResponse) => ({ status: response.status, type: response.headers['content-type'], body: JSON.parse(response.body) as unknown })

function request (method: string, path: string, headers: Record<string, string>, withLength: boolean): string {
  const lines = Object.entries({ host: 'test', ...headers, ...(withLength ? { 'content-length': '0' } : {}) }).map(([name, value]) => `${name}: ${value}\r\n`)
  return `${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`
}

describe('requests without a body', () => {
  test('node skips the body stream of a request that announces no body: it is ended before any hook runs', async (t) => {
    const { app, key } = await buildTestApp(t)
    const ended: Record<string, boolean> = {}
    app.addHook('onRequest', (request, _reply, done) => {
      ended[request.method] = request.raw.readableEnded
      done()
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    const auth = `Authorization: Bearer ${key}\r\n`
    await exchange(port, `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: test\r\n${auth}\r\n`, 3000)
    await exchange(port, `POST /v1/pets HTTP/1.1\r\nHost: test\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`, 3000)
    assert.deepEqual(ended, { GET: true, POST: false })
  })

  test('a create with Content-Type and no body is 400 invalid_request at once, as with Content-Length: 0', async (t) => {
    const { port, key } = await listenTestApp(t)
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const without = await exchange(port, request('POST', '/v1/pets', headers, false), 3000)
    const withLength = await exchange(port, request('POST', '/v1/pets', headers, true), 3000)
    assertError(without, 400, 'invalid_request', EMPTY, { label: 'without Content-Length' })
    assertError(withLength, 400, 'invalid_request', EMPTY, { label: 'with Content-Length: 0' })
  })

  test('every other request without body headers is replied to as with Content-Length: 0', async (t) => {
    const { port, key } = await listenTestApp(t)
    const auth = { authorization: `Bearer ${key}` }
    const cases: Array<[string, string, Record<string, string>]> = [
      // Unknown paths: replied to before any body is read (http/errors.ts, notFoundBeforeBody).
      ['POST', '/nowhere', { 'content-type': 'application/json' }],
      ['POST', '/v1/nowhere', { ...auth, 'content-type': 'application/json' }],
      ['POST', '/v1/pets', { ...auth, 'content-type': 'text/plain' }],
      ['POST', '/v1/pets', auth],
      ['GET', '/v1/pets?limit=1', { ...auth, 'content-type': 'application/json' }],
      ['DELETE', '/v1/pets', { ...auth, 'content-type': 'application/json' }],
      ['POST', '/docs', { 'content-type': 'application/json' }]
    ]
    for (const [method, path, headers] of cases) {
      const without = seen(await exchange(port, request(method, path, headers, false), 3000))
      const withLength = seen(await exchange(port, request(method, path, headers, true), 3000))
      assert.deepEqual(without, withLength, `${method} ${path}`)
    }
  })
})
