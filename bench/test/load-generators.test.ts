import assert from 'node:assert/strict'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test, type TestContext } from 'node:test'
import { readyScenario, runLoad, SCALE_SCENARIOS, SCENARIOS, type LoadResult, type Scenario } from '../src/load.ts'
import { wrkVersion } from '../src/wrk.ts'

/**
 * The benchmark's two load generators must send the same requests: each scenario is run by
 * autocannon and by wrk against a server that records what it receives, and the requests'
 * shapes (method, path with the id taken out, headers, body with its number taken out) must be
 * the same set, with the mix in the same proportions. The recorder tags its replies to reads
 * (a tag of the path), so the revalidate scenarios learn their tags from it as from the service.
 */

// Few enough that a second of load draws every id, so the range's ends are checked too.
const PETS = 100
const KEY = 'psk_benchloadtestkey'

interface Recorded { shape: string, tag: string, id?: number, seed?: number }

function shapeOf (request: IncomingMessage, body: string): Recorded {
  const path = request.url ?? ''
  const idMatch = /^\/v1\/pets\/(\d+)$/.exec(path)
  let bodyShape = '-'
  let seed: number | undefined
  if (body !== '') {
    const parsed = JSON.parse(body) as { name: string, categoryId: number, status: string }
    seed = Number(/^bench-(\d+)$/.exec(parsed.name)?.[1])
    // The body's one number is taken out; what remains must follow from it.
    assert.deepEqual(parsed, { name: `bench-${seed}`, categoryId: seed % 50, status: 'available' })
    bodyShape = 'create body'
  }
  const tag = revalidation(request)
  const shape = [
    request.method,
    idMatch ? '/v1/pets/{id}' : path,
    `auth=${request.headers.authorization ?? '-'}`,
    `type=${request.headers['content-type'] ?? '-'}`,
    `length=${request.headers['content-length'] === undefined ? '-' : Number(request.headers['content-length']) === Buffer.byteLength(body)}`,
    `if-none-match=${tag}`,
    body === '' ? '' : bodyShape
  ].join(' ').trim()
  return { shape, tag, id: idMatch ? Number(idMatch[1]) : undefined, seed }
}

/** The tag the recorder sends with a read: its own for each path. */
const tagOf = (path: string) => `"${Buffer.from(path).toString('base64url')}"`

/** Whether a request sent a tag, and whether it was the one of its path. */
function revalidation (request: IncomingMessage): string {
  const sent = request.headers['if-none-match']
  if (sent === undefined) return '-'
  return sent === tagOf(request.url ?? '') ? 'its tag' : `another tag ${sent}`
}

/**
 * A server that records every request and replies 401 to those without a key; to a read with
 * its key, 304 when it sent the path's tag, else 200 with the tag; 200 to the rest.
 */
async function recorder (t: TestContext) {
  const received: Recorded[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
      received.push(shapeOf(request, body))
      if (!request.headers.authorization) return response.writeHead(401, { 'content-type': 'application/json' }).end('{}')
      if (request.method !== 'GET') return response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      const tag = tagOf(request.url ?? '')
      if (request.headers['if-none-match'] === tag) return response.writeHead(304, { etag: tag }).end()
      response.writeHead(200, { 'content-type': 'application/json', etag: tag }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, received }
}

/** Runs the scenario with one generator; a scenario that learns from the server does so first, and that is not recorded. */
async function runWith (generator: 'wrk' | 'autocannon', url: string, scenario: Scenario, received: Recorded[]): Promise<LoadResult> {
  const ready = await readyScenario(scenario, url, PETS, KEY)
  received.length = 0
  const before = process.env.BENCH_LOAD
  process.env.BENCH_LOAD = generator
  try {
    return await runLoad(url, ready, { pets: PETS, key: KEY, connections: 4, duration: 1 })
  } finally {
    if (before === undefined) delete process.env.BENCH_LOAD
    else process.env.BENCH_LOAD = before
  }
}

const share = (records: Recorded[], match: (r: Recorded) => boolean) => records.filter(match).length / records.length

const scenarios = [...SCENARIOS, ...SCALE_SCENARIOS.filter((scale) => !SCENARIOS.some((s) => s.name === scale.name))]

test('wrk and autocannon send the same requests in every benchmark scenario', async (t) => {
  if (wrkVersion === undefined) {
    const message = 'wrk is missing: install it with apt-get install -y wrk (.ci/run does)'
    if (process.env.CI === 'true') assert.fail(message)
    process.stderr.write(`\n*** SKIPPED the load generator test: ${message} ***\n\n`)
    t.skip(message)
    return
  }
  for (const scenario of scenarios) {
    await t.test(scenario.name, async (t) => {
      const sides = []
      for (const generator of ['autocannon', 'wrk'] as const) {
        const { url, received } = await recorder(t)
        const result = await runWith(generator, url, scenario, received)
        // Every response counted, and those with a 4xx counted as such (wrk as autocannon).
        // Responses are counted, up to those still in flight when the run ended.
        assert.ok(result.requests > 100 && received.length >= result.requests && received.length <= result.requests + 4, `${generator}: ${result.requests} responses counted, ${received.length} requests received`)
        assert.equal(result.errors, 0)
        assert.equal(result.errorStatuses, scenario.name === '401' ? result.requests : 0, `${generator}: responses not 2xx`)
        assert.ok(result.p50 > 0 && result.p99 >= result.p50, `${generator}: p50 ${result.p50} p99 ${result.p99}`)
        // A revalidating request sends its path's tag, every time; no other request sends one.
        assert.deepEqual(new Set(received.map((r) => r.tag)), new Set([scenario.name.startsWith('revalidate ') ? 'its tag' : '-']), generator)
        const ids = received.flatMap((r) => r.id === undefined ? [] : [r.id])
        assert.ok(ids.every((id) => Number.isInteger(id) && id >= 1 && id <= PETS), `${generator}: an id outside 1..${PETS}`)
        if (ids.length > 0) {
          // Drawn at random, n ids cover PETS·(1 − e^(−n/PETS)) of the pets on average.
          const expected = PETS * (1 - Math.exp(-ids.length / PETS))
          assert.ok(new Set(ids).size >= 0.8 * expected, `${generator}: ${new Set(ids).size} distinct ids in ${ids.length}`)
          // With a thousand draws or more, missing either end of the range is a one in 20 000 chance.
          if (ids.length >= 1000) assert.deepEqual([Math.min(...ids), Math.max(...ids)], [1, PETS], `${generator}: ids do not span 1..${PETS}`)
        }
        const seeds = received.flatMap((r) => r.seed === undefined ? [] : [r.seed])
        if (seeds.length > 0) assert.ok(new Set(seeds).size > seeds.length * 0.9, `${generator}: bodies repeat`)
        sides.push({ generator, received, shapes: [...new Set(received.map((r) => r.shape))].sort() })
      }
      const [autocannon, wrk] = sides as [typeof sides[0], typeof sides[0]]
      assert.deepEqual(wrk.shapes, autocannon.shapes)
      if (scenario.name === 'mix') {
        for (const { generator, received } of sides) {
          const list = share(received, (r) => r.shape.startsWith('GET /v1/pets?limit=20 '))
          const get = share(received, (r) => r.id !== undefined)
          const create = share(received, (r) => r.shape.startsWith('POST '))
          assert.ok(Math.abs(list - 0.7) < 0.05 && Math.abs(get - 0.2) < 0.05 && Math.abs(create - 0.1) < 0.05, `${generator}: list ${list}, get ${get}, create ${create}`)
        }
      }
    })
  }
})
