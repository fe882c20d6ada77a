import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

test('a path under /docs that is not the page or its script is 404 not_found with the Error body, GET and HEAD', async (t) => {
  const { inject } = await buildTestApp(t)
  for (const path of ['/docs/nope', '/docs/js/other.js', '/docs/js/', '/docs/openapi.json', '/docs//']) {
    const res = await inject({ url: `${path}?q=1` })
    assertError(res, 404, 'not_found', `No route for GET ${path}.`, { label: path })
    const head = await inject({ method: 'HEAD', url: path })
    assert.deepEqual({ status: head.statusCode, body: head.body }, { status: 404, body: '' }, `HEAD ${path}`)
  }
})

test('a 9 000-character path under /docs gets a 404 quoting at most 200 characters of it', async (t) => {
  const { inject } = await buildTestApp(t)
  const path = '/docs/' + 'Q'.repeat(9000)
  const res = await inject({ url: path })
  assertError(res, 404, 'not_found', `No route for GET ${path.slice(0, 199)}….`)
})

test('the script is the same response on every visit, query or not; HEAD gets its headers without the body', async (t) => {
  const { app } = await buildTestApp(t)
  const first = await app.inject({ url: '/docs/js/scalar.js?v=1' })
  const second = await app.inject({ url: '/docs/js/scalar.js' })
  assert.equal(first.statusCode, 200)
  assert.ok(first.rawPayload.equals(second.rawPayload))
  assert.equal(first.headers['content-length'], String(first.rawPayload.length))
  const head = await app.inject({ method: 'HEAD', url: '/docs/js/scalar.js' })
  assert.deepEqual({ status: head.statusCode, length: head.headers['content-length'], type: head.headers['content-type'], body: head.body },
    { status: 200, length: String(first.rawPayload.length), type: first.headers['content-type'], body: '' })
})
