import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../src/app.ts'
import { READINESS_FRESH_MS } from '../../src/ops/health.ts'
import { openStore } from '../../src/store/index.ts'
import { issueKey, json, testConfig } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { captureLog } from '../helpers/log-capture.ts'
import { fillUp, mountFailingExt4, mountTmpfs } from '../helpers/mounts.ts'

const FAILED_CREATES = 20

/** An app on a new SQLite store at dir, logging at info into a capture. */
async function appOn (t: TestContext, dir: string) {
  const store = await openStore(`sqlite:${dir}/petstore.db`)
  await store.migrate()
  const { key } = await issueKey(store)
  const log = captureLog()
  const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'info' }), store, logStream: log.stream })
  t.after(() => app.close())
  const create = (name: string) => app.inject({ method: 'POST', url: '/v1/pets', headers: { authorization: `Bearer ${key}`, ...json }, payload: JSON.stringify({ name, categoryId: 7 }) })
  const get = (id: bigint) => app.inject({ method: 'GET', url: `/v1/pets/${id}`, headers: { authorization: `Bearer ${key}` } })
  const readyz = () => app.inject({ method: 'GET', url: '/readyz' })
  return { app, store, log, create, get, readyz }
}

type CreateResponse = Awaited<ReturnType<Awaited<ReturnType<typeof appOn>>['create']>>

/** The message of the 503 while the store is unavailable: it names the request. */
const storeUnavailable = (res: CreateResponse) => `The store is unavailable; retry later (request id ${res.headers['x-request-id']}).`

/** 503 unavailable with Retry-After and the Error body naming the request. */
function assertUnavailable (res: CreateResponse, what: string) {
  assertError(res, 503, 'unavailable', storeUnavailable(res), { label: what })
  assert.equal(res.headers['retry-after'], '1', what)
}

/** The lines at warn or above, and how many carry a stack. */
function problems (log: ReturnType<typeof captureLog>) {
  const entries = log.entries()
  return {
    lines: entries.filter((entry) => Number(entry.level) >= 40).map((entry) => `${entry.level} ${entry.msg}`),
    stacks: entries.filter((entry) => JSON.stringify(entry).includes('"stack"')).length
  }
}

test('a full disk: creates get 503 with Retry-After, /readyz fails from the first failed create, one error line; once space is freed a create works and /readyz is 200', async (t) => {
  const dir = mountTmpfs(t, '2m')
  if (dir === undefined) return
  const { log, create, get, readyz } = await appOn(t, dir)
  const first = await create('Rex')
  assert.equal(first.statusCode, 201)
  assert.deepEqual((await readyz()).json(), { status: 'ready' })

  fillUp(`${dir}/filler`)
  assertUnavailable(await create('Full'), 'the first create on a full disk')
  // Not ready at once, from the failed write, not from the next check of the store.
  const notReadyAtOnce = await readyz()
  assertError(notReadyAtOnce, 503, 'unavailable', storeUnavailable(notReadyAtOnce))
  assert.deepEqual(problems(log), { lines: ['50 store writes are failing: replying 503 until one succeeds'], stacks: 0 })
  for (let i = 0; i < FAILED_CREATES; i++) assertUnavailable(await create(`Full ${i}`), `create ${i} on a full disk`)
  const notReady = await readyz()
  assertError(notReady, 503, 'unavailable', storeUnavailable(notReady))
  assert.equal((await get(BigInt(first.json().id))).statusCode, 200, 'reads go on')
  assert.deepEqual(problems(log), { lines: ['50 store writes are failing: replying 503 until one succeeds'], stacks: 0 })

  rmSync(`${dir}/filler`)
  // Ready again without a create, at the next check: a load balancer that stopped sending
  // them still sees it heal.
  await sleep(READINESS_FRESH_MS + 50)
  assert.deepEqual((await readyz()).json(), { status: 'ready' })
  const again = await create('Max')
  assert.equal(again.statusCode, 201)
  assert.deepEqual([(await readyz()).statusCode, (await get(BigInt(again.json().id))).json()], [200, { id: again.json().id, name: 'Max', categoryId: 7 }])
  assert.deepEqual(problems(log), { lines: ['50 store writes are failing: replying 503 until one succeeds'], stacks: 0 })
  // One line for each change: the return is told by the store's line alone.
  assert.deepEqual(log.entries().filter((entry) => ['store writes work again', 'ready again', 'not ready: store'].includes(String(entry.msg))).map((entry) => `${entry.level} ${entry.msg}`), ['30 store writes work again'])
})

test('a file system that turns read-only under the store: creates get 503 with Retry-After, /readyz fails from the first failed create, reads go on, one error line; a store lost after that is logged too', async (t) => {
  const disk = mountFailingExt4(t)
  if (disk === undefined) return
  const { store, log, create, get, readyz } = await appOn(t, disk.dir)
  const first = await create('Rex')
  assert.equal(first.statusCode, 201)

  disk.makeReadOnly()
  assertUnavailable(await create('Stuck'), 'the first create on a read-only file system')
  assert.equal((await readyz()).statusCode, 503, 'not ready at once')
  for (let i = 0; i < FAILED_CREATES; i++) assertUnavailable(await create(`Stuck ${i}`), `create ${i} on a read-only file system`)
  const notReady = await readyz()
  assertError(notReady, 503, 'unavailable', storeUnavailable(notReady))
  assert.deepEqual((await get(BigInt(first.json().id))).json(), { id: first.json().id, name: 'Rex', categoryId: 7 }, 'reads go on')
  assert.deepEqual(problems(log), { lines: ['50 store writes are failing: replying 503 until one succeeds'], stacks: 0 })

  // Another reason to be unready is another change, told once.
  await store.close()
  for (let i = 0; i < 3; i++) {
    await sleep(READINESS_FRESH_MS + 50)
    assert.equal((await readyz()).statusCode, 503)
  }
  assert.deepEqual(log.entries().filter((entry) => ['store writes are failing: replying 503 until one succeeds', 'store writes work again', 'ready again', 'not ready: store'].includes(String(entry.msg))).map((entry) => `${entry.level} ${entry.msg}`), ['50 store writes are failing: replying 503 until one succeeds', '40 not ready: store'])
})
