import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { encodeCursor } from '../../src/contract/int64.ts'
import { responseHeadersOf, FRAMING } from '../src/response-headers.ts'
import { prepareStore, serviceEnv, type Prepared } from '../src/store.ts'
import { BASELINE_SCRIPT, serviceScript, START_FLAGS, startServer, type BenchServer } from '../src/servers.ts'

/**
 * `npm run bench` measures the service against the baseline: the baseline must give the same
 * replies to the benchmark's requests, and with `--headers` it must send exactly the headers the
 * service sent, on each kind of response, and the bare baseline none of them.
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

async function responseOf (url: string, init: RequestInit = {}): Promise<{ status: number, body: string }> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.text() }
}

let prepared: Prepared
let service: BenchServer
const servers: BenchServer[] = []
const start = async (name: string, env: Record<string, string>) => {
  const server = await startServer(name, BASELINE_SCRIPT, { BENCH_PETS: String(PETS), ...env }, '/v1/pets?limit=1', [], [], { pinned: false })
  servers.push(server)
  return server
}

before(async () => {
  prepared = await prepareStore(PETS)
  service = await startServer('service', serviceScript(), serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS, [], { pinned: false })
  servers.push(service)
})
after(async () => {
  for (const server of servers) await server.stop()
  await prepared?.cleanup()
})

test('the baseline replies to the benchmark\'s reads with the bytes the service sends, and a create with the same pet', async () => {
  const baseline = await start('baseline', {})
  const auth = { headers: { authorization: `Bearer ${prepared.key}` } }
  // Run first, while the service holds the seeded pets only. The scenarios' reads: the first
  // page, a status, the rare status, a deep cursor (as the load generator makes it), a pet.
  for (const path of ['/v1/pets?limit=20', '/v1/pets?limit=20&status=pending', '/v1/pets?limit=20&status=sold', `/v1/pets?limit=20&cursor=${encodeCursor(90n)}`, '/v1/pets/7', `/v1/pets/${PETS}`]) {
    const expected = await responseOf(service.url + path, auth)
    assert.equal(expected.status, 200, path)
    assert.deepEqual(await responseOf(baseline.url + path, auth), expected, path)
  }
  // A create as the load generator makes it: the first one on either side, so the same id.
  const create = { method: 'POST', headers: { ...auth.headers, 'content-type': 'application/json' }, body: '{"name":"bench-7","categoryId":7,"status":"available"}' }
  const expected = { status: 201, body: `{"id":${PETS + 1},"name":"bench-7","categoryId":7,"status":"available"}` }
  assert.deepEqual(await responseOf(service.url + '/v1/pets', create), expected)
  assert.deepEqual(await responseOf(baseline.url + '/v1/pets', create), expected)
})

// After the test above: this one creates pets on the service.
test('the baseline with the service\'s headers sends, on every kind of response, exactly the headers the service sent', async () => {
  const kinds = await responseHeadersOf(service.url, prepared.key)
  assert.deepEqual(Object.keys(kinds), ['GET /v1/pets 200', 'GET /v1/pets/:petId 200', 'POST /v1/pets 201', 'GET /v1/pets 401'])
  // What the service promises on each response is there: a change in what it sends moves the yardstick with it.
  const everywhere = ['x-request-id', 'ratelimit-policy', 'ratelimit', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'cross-origin-resource-policy', 'cache-control', 'content-security-policy', 'vary']
  assert.deepEqual(Object.keys(kinds['GET /v1/pets 200']!).sort(), [...everywhere, 'link'].sort())
  assert.deepEqual(Object.keys(kinds['GET /v1/pets/:petId 200']!).sort(), [...everywhere, 'deprecation', 'sunset', 'link'].sort())
  assert.deepEqual(Object.keys(kinds['POST /v1/pets 201']!).sort(), [...everywhere, 'location'].sort())
  assert.deepEqual(Object.keys(kinds['GET /v1/pets 401']!).sort(), [...everywhere, 'www-authenticate'].sort())

  const bare = await start('baseline', {})
  const headered = await start('baseline + headers', { BENCH_RESPONSE_HEADERS: JSON.stringify(kinds) })
  for (const [kind, { path, init }] of Object.entries(requests(prepared.key))) {
    assert.deepEqual(await headersOf(headered.url + path, init), kinds[kind], kind)
    const bareHeaders = await headersOf(bare.url + path, init)
    assert.deepEqual(bareHeaders, kind.endsWith('401') ? { 'www-authenticate': 'Bearer realm="petstore"' } : {}, `${kind}, bare`)
  }
})
