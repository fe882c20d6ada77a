import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { launchChromium } from '../../test/helpers/chromium.ts'
import { startServer } from './servers.ts'

const DIST = new URL('../dist/', import.meta.url)
// The client's dependency and its own, each an ES module file, found as a bundler would find them.
const P_RETRY = createRequire(import.meta.url).resolve('p-retry')
const DEPENDENCIES: Record<string, string> = { 'p-retry': P_RETRY, 'is-network-error': createRequire(P_RETRY).resolve('is-network-error') }

test('the built client runs in Chromium: exact int64, Idempotency-Key, pagination, revalidation and PetstoreError', { timeout: 60_000 }, async (t) => {
  assert.ok(existsSync(new URL('index.js', DIST)), 'client/dist is built (npm test builds it: npm run build -w @petstore/client)')
  const browser = await launchChromium(t)
  if (!browser) return
  const { origin, baseUrl, key, store } = await startServer(t)
  for (let i = 1; i <= 3; i++) await store.createPet({ name: `seed ${i}`, categoryId: BigInt(i) })

  const page = browser.pages()[0] ?? await browser.newPage()
  // The package's own files, served on the API's origin as a bundler would ship them.
  await page.route(`${origin}/client-under-test/**`, (route) => {
    const file = new URL(route.request().url()).pathname.replace('/client-under-test/', '')
    return route.fulfill({ contentType: 'text/javascript', body: readFileSync(new URL(file, DIST)) })
  })
  await page.route(`${origin}/client-dependencies/*`, (route) => {
    const name = decodeURIComponent(new URL(route.request().url()).pathname.replace('/client-dependencies/', ''))
    return route.fulfill({ contentType: 'text/javascript', body: readFileSync(DEPENDENCIES[name] ?? assert.fail(`no dependency ${name}`)) })
  })
  // Without a bundler, the page's import map is what resolves the bare names dist imports.
  const imports = Object.fromEntries(Object.keys(DEPENDENCIES).map((name) => [name, `/client-dependencies/${encodeURIComponent(name)}`]))
  // The first pets.get meets a 503 with Retry-After: 0, so the page runs a retry through p-retry.
  let getSent = 0
  await page.route(`${baseUrl}/pets/404`, (route) => ++getSent === 1
    ? route.fulfill({ status: 503, headers: { 'retry-after': '0' }, contentType: 'application/json', body: '{"code":"unavailable","message":"The service is unavailable; retry later.","status":503}' })
    : route.fallback())
  const posted: Array<string | undefined> = []
  page.on('request', (request) => { if (request.method() === 'POST') posted.push(request.headers()['idempotency-key']) })
  // A blank page on the API's origin: the API's own JSON responses forbid scripts (Content-Security-Policy).
  await page.route(`${origin}/client-test-page`, (route) => route.fulfill({ contentType: 'text/html', body: `<!doctype html><title>client test</title><script type="importmap">${JSON.stringify({ imports })}</script>` }))
  await page.goto(`${origin}/client-test-page`)

  const result = await page.evaluate(async ({ baseUrl, key }) => {
    const { createPetstoreClient, PetstoreError } = await import('/client-under-test/index.js' as string)
    const client = createPetstoreClient({ baseUrl, apiKey: key })
    const pet = await client.pets.create({ name: 'Browser pet', categoryId: 9223372036854775807n, status: 'sold' })
    const ids: string[] = []
    for await (const each of client.pets.all({ limit: 2 })) ids.push(String(each.id))
    // The second read sends If-None-Match, which takes it past the browser's own HTTP cache: the page sees the 304.
    const reads = []
    for (let i = 0; i < 2; i++) {
      const { data, meta } = await client.pets.get(pet.id, { meta: true })
      reads.push({ categoryId: String(data.categoryId), status: meta.status, revalidated: meta.revalidated, etag: meta.headers.get('etag') })
    }
    let failure: unknown
    try {
      await client.pets.get(404)
    } catch (error) {
      const { status, code, message, requestId } = error as { status: number, code: string, message: string, requestId?: string }
      failure = { isPetstoreError: error instanceof PetstoreError, status, code, message, hasRequestId: typeof requestId === 'string' }
    }
    return { pet: { ...pet, id: String(pet.id), categoryId: String(pet.categoryId), idIsBigint: typeof pet.id === 'bigint' }, ids, reads, failure }
  }, { baseUrl, key })

  assert.deepEqual(result, {
    pet: { id: '4', name: 'Browser pet', categoryId: '9223372036854775807', status: 'sold', idIsBigint: true },
    ids: ['1', '2', '3', '4'],
    reads: [
      { categoryId: '9223372036854775807', status: 200, revalidated: false, etag: result.reads[0]?.etag },
      { categoryId: '9223372036854775807', status: 304, revalidated: true, etag: result.reads[0]?.etag }
    ],
    failure: { isPetstoreError: true, status: 404, code: 'not_found', message: 'No pet has id 404.', hasRequestId: true }
  })
  assert.match(result.reads[0]?.etag ?? '', /^"[A-Za-z0-9_-]{22}"$/)
  assert.equal(getSent, 2)
  assert.equal(posted.length, 1)
  assert.match(posted[0] ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})
