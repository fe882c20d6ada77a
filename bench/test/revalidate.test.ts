import assert from 'node:assert/strict'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test, type TestContext } from 'node:test'
import autocannon from 'autocannon'
import { readyScenario } from '../src/load.ts'
import { learnTags, revalidatedIds, REVALIDATED_PETS, revalidateGet, revalidateList } from '../src/revalidate.ts'
import { prepareStore, serviceEnv, type Prepared } from '../src/store.ts'
import { BASELINE_SCRIPT, serviceScript, START_FLAGS, startServer, type BenchServer } from '../src/servers.ts'

/**
 * The revalidate scenarios measure 304s: every request they send must get one, from the service
 * and from the baseline it is measured against, with the tags each learned from them.
 */

const PETS = 100

let prepared: Prepared
const servers: BenchServer[] = []

before(async () => {
  prepared = await prepareStore(PETS)
  servers.push(await startServer('service', serviceScript(), serviceEnv(prepared.databaseUrl), '/readyz', START_FLAGS, [], { pinned: false }))
  servers.push(await startServer('baseline', BASELINE_SCRIPT, { BENCH_PETS: String(PETS) }, '/v1/pets?limit=1', [], [], { pinned: false }))
})
after(async () => {
  for (const server of servers) await server.stop()
  await prepared?.cleanup()
})

test('every request of revalidate list 20 and revalidate get by id gets 304 from the service and from the baseline', async () => {
  for (const server of servers) {
    for (const scenario of [revalidateList, revalidateGet]) {
      const ready = await readyScenario(scenario, server.url, PETS, prepared.key)
      const amount = 1000
      const result = await autocannon({ url: server.url, connections: 4, amount, requests: ready.build(PETS, prepared.key) })
      assert.deepEqual(result.statusCodeStats, { 304: { count: amount } }, `${server.name}, ${scenario.name}`)
      assert.equal(result.errors + result.timeouts, 0)
    }
  }
})

test('a revalidating request is the read with the tag of its 200, and its 304 has no body', async () => {
  for (const server of servers) {
    const ready = await readyScenario(revalidateList, server.url, PETS, prepared.key)
    const [request] = ready.build(PETS, prepared.key)
    // Asked with a tag it does not have: the 200 and its tag.
    const plain = await fetch(server.url + '/v1/pets?limit=20', { headers: { authorization: `Bearer ${prepared.key}`, 'if-none-match': '"other"' } })
    assert.equal(plain.status, 200)
    assert.equal((JSON.parse(await plain.text()) as unknown[]).length, 20, 'a full page')
    assert.deepEqual(request, { method: 'GET', path: '/v1/pets?limit=20', headers: { authorization: `Bearer ${prepared.key}`, 'if-none-match': plain.headers.get('etag') } })
    // Sent as the load generator sends it: the headers checked just above.
    const again = await fetch(server.url + request!.path!, { headers: request!.headers as Record<string, string> })
    assert.deepEqual({ status: again.status, body: await again.text() }, { status: 304, body: '' }, server.name)
  }
})

test('the baseline tags only conditional reads: the other scenarios measure it as it was', async () => {
  const baseline = servers.find((server) => server.name === 'baseline')!
  const plain = await fetch(baseline.url + '/v1/pets?limit=20', { headers: { authorization: `Bearer ${prepared.key}` } })
  assert.deepEqual({ status: plain.status, etag: plain.headers.get('etag'), pets: (JSON.parse(await plain.text()) as unknown[]).length }, { status: 200, etag: null, pets: 20 })
})

test('revalidate get by id learns the tags of at most a thousand pets, spread over every id', () => {
  assert.deepEqual(revalidatedIds(3), [1, 2, 3])
  assert.deepEqual(revalidatedIds(REVALIDATED_PETS), Array.from({ length: REVALIDATED_PETS }, (_, i) => i + 1))
  const spread = revalidatedIds(1_000_000)
  assert.equal(new Set(spread).size, REVALIDATED_PETS)
  assert.deepEqual([spread[0], spread[1], spread.at(-1)], [1, 1001, 999_001])
})

async function serve (t: TestContext, listener: RequestListener): Promise<string> {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

test('learning the tags refuses a server that sends none, and one that does not answer its own tag with 304', async (t) => {
  const untagged = await serve(t, (_request, response) => { response.writeHead(200).end('{}') })
  await assert.rejects(learnTags(untagged, ['/v1/pets?limit=20'], 'k'), { message: `GET /v1/pets?limit=20 at ${untagged}: 200 without an ETag; a revalidate scenario needs a 200 with one` })
  const unconditional = await serve(t, (_request, response) => { response.writeHead(200, { etag: '"abc"' }).end('{}') })
  await assert.rejects(learnTags(unconditional, ['/v1/pets/1'], 'k'), { message: `GET /v1/pets/1 at ${unconditional} with If-None-Match: "abc" replied 200, not 304` })
})
