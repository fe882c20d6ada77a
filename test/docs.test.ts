import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from './helpers.ts'

test('GET /docs/ serves the reference page with its script from this server and no key', async (t) => {
  const { app } = await buildTestApp(t)
  const page = await app.inject({ url: '/docs/' })
  assert.equal(page.statusCode, 200)
  assert.match(String(page.headers['content-type']), /^text\/html/)
  assert.match(page.body, /<title>Petstore API reference<\/title>/)
  assert.match(page.body, /<script src="js\/scalar\.js"><\/script>/)
  assert.match(page.body, /"url": "\/v1\/openapi\.json"/)
  assert.deepEqual(page.body.match(/https?:\/\/[^\s"'<>]+/g) ?? [], [], 'the page names no other host')
  const script = await app.inject({ url: '/docs/js/scalar.js' })
  assert.equal(script.statusCode, 200)
  assert.match(String(script.headers['content-type']), /^application\/javascript/)
  assert.ok(script.body.length > 1_000_000)
})

test('GET /docs redirects to /docs/, and the docs routes are not operations of the OpenAPI document', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/docs' })
  assert.equal(res.statusCode, 301)
  assert.equal(res.headers.location, '/docs/')
  const document = JSON.parse((await app.inject({ url: '/v1/openapi.json' })).body)
  assert.deepEqual(Object.keys(document.paths), ['/pets', '/pets/{petId}'])
  assert.equal((await app.inject({ method: 'POST', url: '/docs/' })).statusCode, 405)
})
