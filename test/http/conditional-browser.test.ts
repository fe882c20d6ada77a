import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test, type TestContext } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { launchChromium } from '../helpers/chromium.ts'
import { createTestStore, issueKey, testConfig } from '../helpers/app.ts'
import { scrape } from '../helpers/scrape.ts'

/** What the API server saw of one exchange, as its request log would show it. */
interface Exchange { method: string, url: string, ifNoneMatch?: string, requestHeaders?: string, status: number, allowHeaders?: string }

/** The API listening on 127.0.0.1, on a fresh store with one key, and every exchange it had. */
async function listeningApi (t: TestContext) {
  const { store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const app = await buildApp({ config: testConfig(), store })
  t.after(async () => { await app.close(); await cleanup() })
  const exchanges: Exchange[] = []
  // Each reply as the server sent it, preflights included, before any cache of the browser.
  app.addHook('onResponse', (request, reply, done) => {
    const allowHeaders = reply.getHeader('access-control-allow-headers')
    exchanges.push({
      method: request.method,
      url: request.url,
      ...(request.headers['if-none-match'] === undefined ? {} : { ifNoneMatch: request.headers['if-none-match'] }),
      ...(request.headers['access-control-request-headers'] === undefined ? {} : { requestHeaders: request.headers['access-control-request-headers'] }),
      status: reply.statusCode,
      ...(allowHeaders === undefined ? {} : { allowHeaders: String(allowHeaders) })
    })
    done()
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, store, key, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, exchanges }
}

/** A page on an origin of its own (another port), empty: the API is another origin to it. */
async function otherOrigin (t: TestContext): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>another origin</title>')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const count304 = async (app: Awaited<ReturnType<typeof listeningApi>>['app'], route: string) => {
  const line = (await scrape(app)).split('\n').find((l) => l.startsWith(`http_requests_total{route="${route}",method="GET",status="304"} `))
  return line === undefined ? 0 : Number(line.split(' ')[1])
}

test('in Chromium, a page on another origin reads ETag, sends it back in If-None-Match past the preflight and gets the 304; and the browser\'s own cache revalidates a last page with a 304 the page sees as its 200', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t)
  if (!browser) return
  const api = await listeningApi(t)
  const pageOrigin = await otherOrigin(t)
  const pet = await api.store.createPet({ name: 'Cross-origin pet', categoryId: 5n })
  await api.store.createPet({ name: 'Second pet', categoryId: 6n })
  const petJson = JSON.stringify({ id: Number(pet.id), name: 'Cross-origin pet', categoryId: 5 })
  const lastPageJson = JSON.stringify([JSON.parse(petJson), { id: Number(pet.id) + 1, name: 'Second pet', categoryId: 6 }])

  const page = browser.pages()[0] ?? await browser.newPage()
  await page.goto(`${pageOrigin}/`)
  assert.deepEqual(api.exchanges, [], 'the page itself comes from the other origin')

  // (1) The page's own conditional request, the HTTP cache kept out of it.
  const explicit = await page.evaluate(async ({ api, key, petId }) => {
    const authorization = `Bearer ${key}`
    const first = await fetch(`${api}/v1/pets/${petId}`, { cache: 'no-store', headers: { authorization } })
    const etag = first.headers.get('etag')
    const again = await fetch(`${api}/v1/pets/${petId}`, { cache: 'no-store', headers: { authorization, 'if-none-match': etag ?? '' } })
    const read = async (response: Response) => ({ status: response.status, etag: response.headers.get('etag'), cacheControl: response.headers.get('cache-control'), body: await response.text() })
    return [await read(first), await read(again)]
  }, { api: api.origin, key: api.key, petId: String(pet.id) })
  const tag = explicit[0]?.etag ?? ''
  assert.match(tag, /^"[A-Za-z0-9_-]{22}"$/, 'the page reads ETag: CORS exposes it')
  assert.deepEqual(explicit, [
    { status: 200, etag: tag, cacheControl: 'private, max-age=31536000, immutable', body: petJson },
    { status: 304, etag: tag, cacheControl: 'private, max-age=31536000, immutable', body: '' }
  ])
  // Authorization alone takes a preflight; If-None-Match added to it takes another, naming both.
  const allowsIfNoneMatch = ({ allowHeaders, ...exchange }: Exchange) =>
    allowHeaders === undefined ? exchange : { ...exchange, allowsIfNoneMatch: allowHeaders.split(', ').includes('If-None-Match') }
  assert.deepEqual(api.exchanges.splice(0).map(allowsIfNoneMatch), [
    { method: 'OPTIONS', url: `/v1/pets/${pet.id}`, requestHeaders: 'authorization', status: 204, allowsIfNoneMatch: true },
    { method: 'GET', url: `/v1/pets/${pet.id}`, status: 200 },
    { method: 'OPTIONS', url: `/v1/pets/${pet.id}`, requestHeaders: 'authorization,if-none-match', status: 204, allowsIfNoneMatch: true },
    { method: 'GET', url: `/v1/pets/${pet.id}`, ifNoneMatch: tag, status: 304 }
  ])

  // (2) The browser's HTTP cache: the last page is stored (private, no-cache) and checked each time.
  const before304 = await count304(api.app, '/v1/pets')
  const cached = await page.evaluate(async ({ api, key }) => {
    const reads = []
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${api}/v1/pets?limit=10`, { headers: { authorization: `Bearer ${key}` } })
      reads.push({ status: response.status, etag: response.headers.get('etag'), cacheControl: response.headers.get('cache-control'), body: await response.text() })
    }
    return reads
  }, { api: api.origin, key: api.key })
  const pageTag = cached[0]?.etag ?? ''
  assert.match(pageTag, /^"[A-Za-z0-9_-]{22}"$/)
  assert.notEqual(pageTag, tag)
  const whole = { status: 200, etag: pageTag, cacheControl: 'private, no-cache', body: lastPageJson }
  assert.deepEqual(cached, [whole, whole], 'the page gets the body both times')
  assert.deepEqual(api.exchanges.map(allowsIfNoneMatch), [
    { method: 'OPTIONS', url: '/v1/pets?limit=10', requestHeaders: 'authorization', status: 204, allowsIfNoneMatch: true },
    { method: 'GET', url: '/v1/pets?limit=10', status: 200 },
    { method: 'GET', url: '/v1/pets?limit=10', ifNoneMatch: pageTag, status: 304 }
  ], 'the browser sent the tag it kept, and the server answered without a body')
  assert.equal(await count304(api.app, '/v1/pets') - before304, 1, 'http_requests_total counted the 304')
})
