import assert from 'node:assert/strict'
import { test } from 'node:test'
import { answerHeadersOf, FRAMING } from '../scripts/bench/answer-headers.ts'
import { prepareStore, serviceEnv } from '../scripts/bench/store.ts'
import { START_FLAGS, startServer, type BenchServer } from '../scripts/bench/servers.ts'

/**
 * `npm run bench -- --headers` compares the service with a baseline that sends the service's
 * response headers: that baseline must send exactly the headers the service sent, on each kind
 * of answer, and the bare baseline none of them.
 */

const PETS = 100

const requests = (key: string) => ({
  'GET /v1/pets 200': { path: '/v1/pets?limit=20', init: { headers: { authorization: `Bearer ${key}` } } },
  'GET /v1/pets/:petId 200': { path: '/v1/pets/7', init: { headers: { authorization: `Bearer ${key}` } } },
  'POST /v1/pets 201': { path: '/v1/pets', init: { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'rex', categoryId: 2, status: 'sold' }) } },
  'GET /v1/pets 401': { path: '/v1/pets?limit=20', init: {} }
})

async function headersOf (url: string, init: RequestInit): Promise<Record<string, string>> {
  const response = await fetch(url, init)
  await response.arrayBuffer()
  return Object.fromEntries([...response.headers].filter(([name]) => !FRAMING.has(name)))
}

test('the baseline with the service\'s headers sends, on every kind of answer, exactly the headers the service sent', async (t) => {
  const prepared = await prepareStore(PETS)
  const servers: BenchServer[] = []
  t.after(async () => {
    for (const server of servers) await server.stop()
    await prepared.cleanup()
  })
  const service = await startServer('service', 'src/server.ts', serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS, [], { pinned: false })
  servers.push(service)
  const kinds = await answerHeadersOf(service.url, prepared.key)

  assert.deepEqual(Object.keys(kinds), ['GET /v1/pets 200', 'GET /v1/pets/:petId 200', 'POST /v1/pets 201', 'GET /v1/pets 401'])
  // What the service promises on each answer is there: a change in what it sends moves the yardstick with it.
  const everywhere = ['x-request-id', 'ratelimit-policy', 'ratelimit', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'cross-origin-resource-policy', 'cache-control', 'content-security-policy', 'vary']
  assert.deepEqual(Object.keys(kinds['GET /v1/pets 200']!).sort(), [...everywhere, 'link'].sort())
  assert.deepEqual(Object.keys(kinds['GET /v1/pets/:petId 200']!).sort(), [...everywhere, 'deprecation', 'sunset', 'link'].sort())
  assert.deepEqual(Object.keys(kinds['POST /v1/pets 201']!).sort(), [...everywhere, 'location'].sort())
  assert.deepEqual(Object.keys(kinds['GET /v1/pets 401']!).sort(), [...everywhere, 'www-authenticate'].sort())

  const bare = await startServer('baseline', 'scripts/bench/baseline.ts', { BENCH_PETS: String(PETS) }, '/v1/pets?limit=1', [], [], { pinned: false })
  servers.push(bare)
  const headered = await startServer('baseline + headers', 'scripts/bench/baseline.ts', { BENCH_PETS: String(PETS), BENCH_ANSWER_HEADERS: JSON.stringify(kinds) }, '/v1/pets?limit=1', [], [], { pinned: false })
  servers.push(headered)
  for (const [kind, { path, init }] of Object.entries(requests(prepared.key))) {
    assert.deepEqual(await headersOf(headered.url + path, init), kinds[kind], kind)
    const bareHeaders = await headersOf(bare.url + path, init)
    assert.deepEqual(bareHeaders, kind.endsWith('401') ? { 'www-authenticate': 'Bearer realm="petstore"' } : {}, `${kind}, bare`)
  }
})
