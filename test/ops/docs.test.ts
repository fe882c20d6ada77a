import assert from 'node:assert/strict'
import { test } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { buildTestApp } from '../helpers/app.ts'

test('GET /docs/ serves the reference page with its script from this server and no key', async (t) => {
  const { app } = await buildTestApp(t)
  const page = await app.inject({ url: '/docs/' })
  assert.equal(page.statusCode, 200)
  assert.match(String(page.headers['content-type']), /^text\/html/)
  assert.match(page.body, /<title>Petstore API reference<\/title>/)
  assert.match(page.body, /<script src="js\/scalar\.js\?v=[\w-]{22}"><\/script>/)
  assert.match(page.body, /"url": "\/v1\/openapi\.json"/)
  // Its own empty icon, so the browser asks for no /favicon.ico (the app's 404, a console error).
  assert.match(page.body, /<link rel="icon" href="data:,">\s*<\/head>/)
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

test('the docs are served as static files: one versioned script kept a year, compressed as asked, each form with its strong ETag, 304 when unchanged', async (t) => {
  const { app } = await buildTestApp(t)
  const page = await app.inject({ url: '/docs/' })
  const version = /<script src="js\/scalar\.js\?v=([\w-]{22})"><\/script>/.exec(page.body)![1]!
  assert.deepEqual([page.headers['cache-control'], page.headers.etag], ['no-cache', page.headers.etag])
  assert.match(String(page.headers.etag), /^"[\w-]{22}"$/)

  const plain = await app.inject({ url: `/docs/js/scalar.js?v=${version}` })
  const br = await app.inject({ url: `/docs/js/scalar.js?v=${version}`, headers: { 'accept-encoding': 'gzip, deflate, br' } })
  const gzip = await app.inject({ url: `/docs/js/scalar.js?v=${version}`, headers: { 'accept-encoding': 'gzip;q=1, br;q=0' } })
  const headersOf = (res: typeof plain) => ({
    status: res.statusCode,
    cacheControl: res.headers['cache-control'],
    etag: res.headers.etag,
    encoding: res.headers['content-encoding'],
    vary: res.headers.vary,
    length: Number(res.headers['content-length'])
  })
  assert.deepEqual([plain, br, gzip].map(headersOf), [
    { status: 200, cacheControl: 'public, max-age=31536000, immutable', etag: `"${version}"`, encoding: undefined, vary: 'Origin, Accept-Encoding', length: plain.rawPayload.length },
    { status: 200, cacheControl: 'public, max-age=31536000, immutable', etag: `"${version}-br"`, encoding: 'br', vary: 'Origin, Accept-Encoding', length: br.rawPayload.length },
    { status: 200, cacheControl: 'public, max-age=31536000, immutable', etag: `"${version}-gzip"`, encoding: 'gzip', vary: 'Origin, Accept-Encoding', length: gzip.rawPayload.length }
  ])
  assert.ok(br.rawPayload.length < plain.rawPayload.length / 3, `Brotli: ${br.rawPayload.length} of ${plain.rawPayload.length} bytes`)
  assert.ok(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload), 'the Brotli body is the script')
  assert.ok(gunzipSync(gzip.rawPayload).equals(plain.rawPayload), 'the gzip body is the script')

  // Without its version the address may change content: kept, but revalidated.
  const unversioned = await app.inject({ url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'br' } })
  assert.deepEqual(headersOf(unversioned), { ...headersOf(br), cacheControl: 'no-cache' })
  const again = await app.inject({ url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'br', 'if-none-match': `W/"x", "${version}-br"` } })
  assert.deepEqual([again.statusCode, again.headers.etag, again.rawPayload.length], [304, `"${version}-br"`, 0])
  const otherForm = await app.inject({ url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'br', 'if-none-match': `"${version}"` } })
  assert.equal(otherForm.statusCode, 200, 'the plain form\'s ETag does not stand for the Brotli form')
  const pageAgain = await app.inject({ url: '/docs/', headers: { 'if-none-match': String(page.headers.etag) } })
  assert.deepEqual([pageAgain.statusCode, pageAgain.body], [304, ''])
})
