import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, test } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { nextPath, postPet, seedPets } from '../helpers/api-steps.ts'
import { buildTestApp, injectChecked, testConfig, type TestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

const SUNSET = Date.parse('2030-12-05T00:00:00Z')
const A_YEAR = 'private, max-age=31536000, immutable'
const LAST_PAGE = 'private, no-cache'
const DEPRECATION = {
  deprecation: '@1767225600',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  link: '<http://localhost:80/v1/pets>; rel="successor-version", <http://localhost:80/docs#tag/animals/GET/pets/%7BpetId%7D>; rel="deprecation"; type="text/html"'
}

/** The tag the service must give a body: computed here independently of src/. */
const tagOf = (body: string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`

/** The header fields a cache needs, as a reply carries them (undefined when absent). */
function cacheFields (headers: Record<string, unknown>) {
  const names = ['etag', 'cache-control', 'vary', 'ratelimit-policy', 'ratelimit', 'deprecation', 'sunset', 'link', 'content-type', 'content-length']
  return Object.fromEntries(names.map((name) => [name, headers[name]]))
}

const get = (api: TestApp, url: string, ifNoneMatch?: string, method: 'GET' | 'HEAD' = 'GET') =>
  api.inject({ method, url, headers: { ...api.auth, ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }) } })

describe('conditional requests', () => {
  test('a found pet carries its strong ETag and is kept a year; a matching If-None-Match gets a 304 with the same fields and no body', async (t) => {
    const api = await buildTestApp(t)
    const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
    const full = await get(api, `/v1/pets/${pet.id}`)
    assert.equal(full.statusCode, 200)
    assert.deepEqual(cacheFields(full.headers), {
      etag: tagOf(full.body),
      'cache-control': A_YEAR,
      vary: 'Origin',
      'ratelimit-policy': '"default";q=1000;w=60',
      ratelimit: '"default";r=998;t=60',
      ...DEPRECATION,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(full.body.length)
    })
    for (const method of ['GET', 'HEAD'] as const) {
      const again = await get(api, `/v1/pets/${pet.id}`, full.headers.etag as string, method)
      assert.deepEqual({ status: again.statusCode, body: again.body, fields: cacheFields(again.headers) }, {
        status: 304,
        body: '',
        fields: {
          etag: full.headers.etag,
          'cache-control': A_YEAR,
          vary: 'Origin',
          'ratelimit-policy': '"default";q=1000;w=60',
          // Neither 304 was counted: what is left is what the 200 left.
          ratelimit: '"default";r=998;t=60',
          ...DEPRECATION,
          // A HEAD's 304 says what the 200 would be, as a HEAD does; a GET's says nothing (RFC 9110 section 8.6).
          'content-type': method === 'HEAD' ? full.headers['content-type'] : undefined,
          'content-length': method === 'HEAD' ? full.headers['content-length'] : undefined
        }
      }, method)
    }
  })

  test('If-None-Match is read as RFC 9110 says: a weak tag, a list, and * match; another tag gets the 200, a value that is no list of tags 400', async (t) => {
    const api = await buildTestApp(t)
    const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
    const etag = (await get(api, `/v1/pets/${pet.id}`)).headers.etag as string
    const cases: Array<[string, number]> = [
      [etag, 304],
      [`W/${etag}`, 304],
      [`"other", ${etag}`, 304],
      [`"a","b" ,W/${etag}`, 304],
      ['*', 304],
      [' * ', 304],
      [`,${etag},,`, 304],
      ['"other"', 200],
      [`${etag.slice(0, -2)}"`, 200],
      ['W/"other", "another"', 200]
    ]
    for (const [ifNoneMatch, status] of cases) {
      const res = await get(api, `/v1/pets/${pet.id}`, ifNoneMatch)
      assert.deepEqual({ ifNoneMatch, status: res.statusCode, body: res.body }, { ifNoneMatch, status, body: status === 304 ? '' : JSON.stringify(pet) })
    }
    for (const malformed of [etag.slice(1, -1), '', `${etag} *`, '"a"b"', `w/${etag}`, `"${'x'.repeat(4095)}"`]) {
      const res = await get(api, `/v1/pets/${pet.id}`, malformed)
      assertError(res, 400, 'invalid_request', 'Invalid request: header.if-none-match is not valid.', { details: [{ field: 'header.if-none-match', message: 'is not valid' }], label: malformed.slice(0, 40) })
    }
  })

  test('an error is never turned into a 304: 404, 400, 401, 410 and 429 keep their status, body and no-store', async (t) => {
    let now = Date.parse('2026-01-01T00:00:00Z')
    const api = await buildTestApp(t, { now: () => now, env: { RATE_LIMIT_PER_MINUTE: '4' } })
    const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
    const notFound = await get(api, '/v1/pets/123456', '*')
    assertError(notFound, 404, 'not_found', 'No pet has id 123456.')
    assert.equal(notFound.headers['cache-control'], 'no-store')
    assert.equal(notFound.headers.etag, undefined)
    const badId = await get(api, '/v1/pets/rex', '*')
    assertError(badId, 400, 'invalid_request', 'Invalid request: path.petId must be an integer (int64).', { details: [{ field: 'path.petId', message: 'must be an integer (int64)' }] })
    const noKey = await api.inject({ url: `/v1/pets/${pet.id}`, headers: { 'if-none-match': '*' } })
    assertError(noKey, 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')
    now = SUNSET
    const gone = await get(api, `/v1/pets/${pet.id}`, '*')
    assertError(gone, 410, 'gone', 'getPet was removed on Thu, 05 Dec 2030 00:00:00 GMT; use GET /pets with the status filter.')
    assert.equal(gone.headers['cache-control'], 'no-store')
    // The create, the 404, the 400 and the 410 used the key's four requests: each error counted.
    const spent = await get(api, '/v1/pets', '*')
    assertError(spent, 429, 'rate_limited', 'This API key has used its 4 requests of the current minute; retry after the time in Retry-After.')
    assert.deepEqual([spent.headers['cache-control'], spent.headers.etag, spent.headers.ratelimit], ['no-store', undefined, '"default";r=0;t=60'])
  })

  test('a found pet is never kept past the sunset: max-age counts down to it', async (t) => {
    let now = SUNSET - 90_500
    const api = await buildTestApp(t, { now: () => now })
    const pet = await postPet(api, { name: 'Rex', categoryId: 7 })
    const first = await get(api, `/v1/pets/${pet.id}`)
    assert.equal(first.headers['cache-control'], 'private, max-age=90, immutable')
    now = SUNSET - 1
    const last = await get(api, `/v1/pets/${pet.id}`, first.headers.etag as string)
    assert.deepEqual([last.statusCode, last.headers['cache-control']], [304, 'private, max-age=0, immutable'])
  })

  test('a 304 is free: it leaves the key\'s count as it was, a tag that does not match is counted, and a spent key gets 429 even with a matching tag', async (t) => {
    const api = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '4' } })
    const [pet] = await seedPets(api.store, ['available'])
    const first = await get(api, `/v1/pets/${pet!.id}`)
    assert.equal(first.headers.ratelimit, '"default";r=3;t=60')
    const etag = first.headers.etag as string
    for (let i = 0; i < 20; i++) {
      const res = await get(api, `/v1/pets/${pet!.id}`, etag)
      assert.deepEqual([res.statusCode, res.headers.ratelimit], [304, '"default";r=3;t=60'])
    }
    const changed = await get(api, `/v1/pets/${pet!.id}`, '"not-this-one"')
    assert.deepEqual([changed.statusCode, changed.headers.ratelimit], [200, '"default";r=2;t=60'])
    assert.equal((await get(api, '/v1/pets')).headers.ratelimit, '"default";r=1;t=60')
    assert.equal((await get(api, '/v1/pets', '"stale"')).headers.ratelimit, '"default";r=0;t=60')
    const refused = await get(api, `/v1/pets/${pet!.id}`, etag)
    assertError(refused, 429, 'rate_limited', 'This API key has used its 4 requests of the current minute; retry after the time in Retry-After.')
    // A conditional request that is no 304 is refused like any other once the count runs out.
    const over = await get(api, `/v1/pets/${pet!.id}`, '"stale"')
    assertError(over, 429, 'rate_limited', 'This API key has used its 4 requests of the current minute; retry after the time in Retry-After.')
  })

  test('a key\'s first request of a window may be a 304: the fields announce the whole quota and window', async (t) => {
    const api = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '5' } })
    const [pet] = await seedPets(api.store, ['sold'])
    const body = JSON.stringify(pet)
    const res = await get(api, `/v1/pets/${pet!.id}`, tagOf(body))
    assert.deepEqual([res.statusCode, res.headers.ratelimit], [304, '"default";r=5;t=60'])
  })

  test('a full page is kept a year and its tag never changes; the last page is revalidated each time, and its tag changes when a pet is added', async (t) => {
    const api = await buildTestApp(t)
    await seedPets(api.store, ['available', 'sold', 'available'])
    const full = await get(api, '/v1/pets?limit=2')
    assert.deepEqual([full.statusCode, full.headers['cache-control'], full.headers.etag], [200, A_YEAR, tagOf(full.body)])
    const last = await get(api, '/v1/pets?limit=5')
    assert.deepEqual([last.statusCode, last.headers['cache-control'], last.headers.etag, last.headers.link], [200, LAST_PAGE, tagOf(last.body), undefined])

    const fullAgain = await get(api, '/v1/pets?limit=2', full.headers.etag as string)
    assert.deepEqual({ status: fullAgain.statusCode, body: fullAgain.body, fields: cacheFields(fullAgain.headers) }, {
      status: 304,
      body: '',
      fields: { ...cacheFields(full.headers), ratelimit: fullAgain.headers.ratelimit, 'content-type': undefined, 'content-length': undefined }
    })
    assert.equal(fullAgain.headers.link, full.headers.link)
    const lastAgain = await get(api, '/v1/pets?limit=5', last.headers.etag as string)
    assert.deepEqual([lastAgain.statusCode, lastAgain.headers['cache-control'], lastAgain.headers.etag], [304, LAST_PAGE, last.headers.etag])

    const added = await postPet(api, { name: 'Newcomer', categoryId: 9 })
    const grown = await get(api, '/v1/pets?limit=5', last.headers.etag as string)
    assert.equal(grown.statusCode, 200)
    assert.deepEqual(grown.json(), [...last.json(), added])
    assert.deepEqual([grown.headers.etag, grown.headers['cache-control']], [tagOf(grown.body), LAST_PAGE])
    assert.notEqual(grown.headers.etag, last.headers.etag)
    assert.equal((await get(api, '/v1/pets?limit=2', full.headers.etag as string)).statusCode, 304)
  })

  test('a full page keeps its tag across creates and a restart: a new app on the same store gives the same tag', async (t) => {
    const api = await buildTestApp(t)
    await seedPets(api.store, ['available', 'pending', 'available', 'sold'])
    const page = await get(api, '/v1/pets?limit=3&status=available')
    const full = await get(api, '/v1/pets?limit=3')
    await postPet(api, { name: 'Later', categoryId: 1, status: 'available' })
    const restarted = await buildApp({ config: testConfig(), store: api.store })
    t.after(() => restarted.close())
    const after = await injectChecked(restarted, { url: '/v1/pets?limit=3', headers: { ...api.auth, 'if-none-match': full.headers.etag as string } })
    assert.deepEqual([after.statusCode, after.headers.etag], [304, full.headers.etag])
    // The filtered listing was the last page (two available pets) and now has a third.
    const filtered = await injectChecked(restarted, { url: '/v1/pets?limit=3&status=available', headers: { ...api.auth, 'if-none-match': page.headers.etag as string } })
    assert.equal(filtered.statusCode, 200)
    assert.equal(filtered.json().length, 3)
  })

  test('a cursor walk revalidated page by page sees every new pet exactly once', async (t) => {
    const api = await buildTestApp(t)
    await seedPets(api.store, Array.from({ length: 5 }, () => 'available' as const))
    /** Walks every page, sending the tag each page had the last time; the ids seen, and the statuses. */
    async function walk (counts: Record<number, number>) {
      const ids: number[] = []
      let path: string | undefined = '/v1/pets?limit=2'
      while (path !== undefined) {
        const res = await get(api, path, tags.get(path))
        counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1
        if (res.statusCode === 200) {
          tags.set(path, res.headers.etag as string)
          pages.set(path, res.json())
        }
        ids.push(...pages.get(path)!.map((pet) => pet.id))
        path = nextPath(res.headers.link)
      }
      return ids
    }
    const pages = new Map<string, Array<{ id: number }>>()
    const tags = new Map<string, string>()
    const firstCounts: Record<number, number> = {}
    const first = await walk(firstCounts)
    assert.deepEqual(first, [1, 2, 3, 4, 5])
    const added = [await postPet(api, { name: 'six', categoryId: 1 }), await postPet(api, { name: 'seven', categoryId: 1 })]
    const counts: Record<number, number> = {}
    const second = await walk(counts)
    assert.deepEqual(second, [1, 2, 3, 4, 5, ...added.map((pet) => pet.id)])
    // The two full pages came back as 304s; the old last page (now full) and the new last page as 200s.
    assert.deepEqual({ first: firstCounts, second: counts }, { first: { 200: 3 }, second: { 304: 2, 200: 2 } })
  })
})
