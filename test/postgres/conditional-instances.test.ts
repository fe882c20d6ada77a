import assert from 'node:assert/strict'
import { test } from 'node:test'
import { freshSchema } from '../helpers/pg-schema.ts'
import { runCli, startServer, stopProcess, type ServerProcess } from '../helpers/processes.ts'

const JSON_TYPE = 'application/json; charset=utf-8'
const FULL_PAGE = 'private, max-age=31536000, immutable'
const LAST_PAGE = 'private, no-cache'

interface Pet { id: number, name: string, categoryId: number }

/** A reply as the test asserts it whole: status, the fields a cache and a client read, body. */
interface Reply {
  status: number
  etag: string | null
  cacheControl: string | null
  type: string | null
  link: string | null
  deprecation: string | null
  sunset: string | null
  body: string
}

async function get (server: ServerProcess, key: string, path: string, ifNoneMatch?: string): Promise<Reply> {
  const response = await fetch(server.url + path, {
    headers: { authorization: `Bearer ${key}`, ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }) },
    signal: AbortSignal.timeout(10_000)
  })
  const field = (name: string) => response.headers.get(name)
  // Every read with a key carries what is left of its limit, a 304 too.
  assert.match(String(field('ratelimit')), /^"default";r=\d+;t=\d+$/, `RateLimit of ${response.status} ${path}`)
  return {
    status: response.status,
    etag: field('etag'),
    cacheControl: field('cache-control'),
    type: field('content-type'),
    link: field('link'),
    deprecation: field('deprecation'),
    sunset: field('sunset'),
    body: await response.text()
  }
}

/** The 304 that stands for a 200: the same validator and caching fields, no body and no type. */
function notModified (full: Reply, link = full.link): Reply {
  return { ...full, status: 304, type: null, link, body: '' }
}

async function createPet (server: ServerProcess, key: string, name: string): Promise<Pet> {
  const response = await fetch(server.url + '/v1/pets', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 3 }),
    signal: AbortSignal.timeout(10_000)
  })
  assert.equal(response.status, 201, await response.clone().text())
  return await response.json() as Pet
}

/** getPet's Link names the instance that answered: each reply has its own base address. */
const petLink = (server: ServerProcess) =>
  `<${server.url}/v1/pets>; rel="successor-version", <${server.url}/docs#tag/animals/GET/pets/%7BpetId%7D>; rel="deprecation"; type="text/html"`

const nextLink = (server: ServerProcess, query: string) => `<${server.url}/v1/pets?${query}>; rel="next"`

test('two instances on one PostgreSQL give the same tags: a tag of one is a 304 at the other, the last page\'s changes at both on a create, and a full page\'s survives a restart', { timeout: 120_000 }, async (t) => {
  const { url } = freshSchema(t)
  const created = await runCli(['keys', 'create', '--name', 'conditional', '--json'], { DATABASE_URL: url })
  assert.equal(created.code, 0, created.stderr)
  const { key } = JSON.parse(created.stdout) as { key: string }
  const env = { DATABASE_URL: url }
  let [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]) as [ServerProcess, ServerProcess]
  const pets = [await createPet(a, key, 'Rex'), await createPet(a, key, 'Tom'), await createPet(a, key, 'Bo')]

  // A found pet: A's tag is B's tag, and B answers it with a 304 carrying getPet's fields.
  const pet = await get(a, key, `/v1/pets/${pets[0]!.id}`)
  assert.deepEqual({ ...pet, etag: undefined }, {
    status: 200,
    etag: undefined,
    cacheControl: FULL_PAGE,
    type: JSON_TYPE,
    link: petLink(a),
    deprecation: pet.deprecation,
    sunset: pet.sunset,
    body: JSON.stringify(pets[0])
  })
  assert.match(String(pet.etag), /^"[A-Za-z0-9_-]{22}"$/)
  assert.ok(pet.deprecation !== null && pet.sunset !== null, 'getPet says it is deprecated')
  assert.deepEqual(await get(b, key, `/v1/pets/${pets[0]!.id}`, String(pet.etag)), notModified(pet, petLink(b)))
  assert.deepEqual(await get(b, key, `/v1/pets/${pets[0]!.id}`), { ...pet, link: petLink(b) })

  // A full page: final, and its tag is the same wherever it is read.
  const fullPage = await get(a, key, '/v1/pets?limit=2')
  const afterSecond = /cursor=([A-Za-z0-9_-]+)>/.exec(String(fullPage.link))?.[1]
  assert.deepEqual({ ...fullPage, etag: undefined }, {
    status: 200, etag: undefined, cacheControl: FULL_PAGE, type: JSON_TYPE, link: nextLink(a, `limit=2&cursor=${afterSecond}`), deprecation: null, sunset: null, body: JSON.stringify(pets.slice(0, 2))
  })
  assert.notEqual(fullPage.etag, pet.etag)
  assert.deepEqual(await get(b, key, '/v1/pets?limit=2', String(fullPage.etag)), notModified(fullPage, nextLink(b, `limit=2&cursor=${afterSecond}`)))

  // The last page: revalidated each time, and a tag of A's is B's while nothing was created.
  const lastPage = await get(a, key, '/v1/pets?limit=10')
  assert.deepEqual({ ...lastPage, etag: undefined }, {
    status: 200, etag: undefined, cacheControl: LAST_PAGE, type: JSON_TYPE, link: null, deprecation: null, sunset: null, body: JSON.stringify(pets)
  })
  assert.deepEqual(await get(b, key, '/v1/pets?limit=10', String(lastPage.etag)), notModified(lastPage))
  assert.deepEqual(await get(a, key, '/v1/pets?limit=10', String(lastPage.etag)), notModified(lastPage))

  // A pet created through A: the old tag names neither instance's last page any more.
  pets.push(await createPet(a, key, 'Kit'))
  const grownAtB = await get(b, key, '/v1/pets?limit=10', String(lastPage.etag))
  assert.deepEqual({ ...grownAtB, etag: undefined }, { ...lastPage, etag: undefined, body: JSON.stringify(pets) })
  assert.notEqual(grownAtB.etag, lastPage.etag)
  assert.deepEqual(await get(a, key, '/v1/pets?limit=10', String(lastPage.etag)), grownAtB)
  assert.deepEqual(await get(a, key, '/v1/pets?limit=10', String(grownAtB.etag)), notModified(grownAtB))
  assert.deepEqual(await get(b, key, '/v1/pets?limit=10', String(grownAtB.etag)), notModified(grownAtB))
  // The full page is as it was.
  assert.deepEqual(await get(b, key, '/v1/pets?limit=2', String(fullPage.etag)), notModified(fullPage, nextLink(b, `limit=2&cursor=${afterSecond}`)))

  // A restarted on the same database (nothing kept in memory): the full page's tag still holds.
  await stopProcess(a.child)
  a = await startServer(t, env)
  assert.deepEqual(await get(a, key, '/v1/pets?limit=2', String(fullPage.etag)), notModified(fullPage, nextLink(a, `limit=2&cursor=${afterSecond}`)))
  assert.deepEqual(await get(a, key, '/v1/pets?limit=2'), { ...fullPage, link: nextLink(a, `limit=2&cursor=${afterSecond}`) })
  assert.deepEqual(await get(a, key, `/v1/pets/${pets[0]!.id}`, String(pet.etag)), notModified(pet, petLink(a)))
  assert.deepEqual(await get(a, key, '/v1/pets?limit=10', String(grownAtB.etag)), notModified(grownAtB))
})
