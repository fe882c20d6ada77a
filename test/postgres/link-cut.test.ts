import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Store } from '../../src/store/types.ts'
import { isError, type ErrorReply } from '../helpers/errors.ts'
import { serverBehindProxy } from '../helpers/postgres-behind-proxy.ts'
import type { ServerProcess } from '../helpers/processes.ts'
import type { TcpProxy } from '../helpers/tcp-proxy.ts'

/*
 * The link to PostgreSQL breaking under load, made on the network as in outage.test.ts: a
 * real server process reaches its own schema only through a TCP proxy of this test, which cuts
 * every open connection (both sides closed or reset, as when a router or a NAT drops the
 * flows) while requests are running on them, or swallows every byte (a black hole). A
 * connection that breaks while a request holds it fails that request with 503 and is thrown
 * away; the process never exits, and nothing acknowledged is lost.
 */

const CONNECT_TIMEOUT_MS = 500
const STATEMENT_TIMEOUT_MS = 1000
// The documented bounds on a silent link (docs/operations/observe.md, "When something is
// away"): a request waits at most DATABASE_CONNECT_TIMEOUT_MS for a connection and
// DATABASE_STATEMENT_TIMEOUT_MS + 1 s for a statement; a create without Idempotency-Key may
// first wait for the batch of creates already being written (writes.ts) to fail the same way,
// so up to twice that. Plus slack for a busy machine.
const SLACK_MS = 2000
const RESPONSE_BOUND_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 1000 + SLACK_MS
const BATCHED_CREATE_BOUND_MS = 2 * (CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 1000) + SLACK_MS
const READY_WITHIN_MS = 5000
const WORKERS = 8
const ROUNDS = 10

const unavailable = (requestId: string) => `The store is unavailable; retry later (request id ${requestId}).`

interface CallResult { status: number, body: unknown, retryAfter: string | null, ms: number, reply: ErrorReply }
interface Pet { id: number, name: string, categoryId: number }

/** A server on a fresh schema of its own, reaching PostgreSQL only through a proxy, with one pet. */
async function serverBehindProxyWithAPet (t: TestContext): Promise<{ setup: Store, proxy: TcpProxy, server: ServerProcess, key: string, first: Pet }> {
  const behind = await serverBehindProxy(t, {
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    RATE_LIMIT_PER_MINUTE: '0'
  })
  const created = await behind.setup.createPet({ name: 'First', categoryId: 1n })
  return { ...behind, first: { id: Number(created.id), name: 'First', categoryId: 1 } }
}

/**
 * WORKERS clients in a loop until stop(): creates with an Idempotency-Key, creates without,
 * listings and gets (of `first` until a create is acknowledged). Every response must be a success or 503 unavailable with Retry-After: 1;
 * anything else is kept in `unexpected`. `acknowledged` holds every pet created with 201.
 */
function startLoad (server: ServerProcess, key: string, first: Pet) {
  const acknowledged: Pet[] = []
  const unexpected: unknown[] = []
  const counts = { ok: 0, unavailable: 0 }
  // The slowest response of each kind of request: keyed create, create, listing, get.
  const slowest = [0, 0, 0, 0]
  const state = { stopped: false }

  async function call (method: string, path: string, requestId: string, headers: Record<string, string> = {}, body?: unknown): Promise<CallResult> {
    const started = performance.now()
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'x-request-id': requestId, ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      // A hang fails here, with its own message, rather than at the test's timeout.
      signal: AbortSignal.timeout(BATCHED_CREATE_BOUND_MS * 2)
    })
    const text = await res.text()
    let parsed: unknown = text
    try { parsed = JSON.parse(text) } catch {}
    const reply = { status: res.status, headers: Object.fromEntries(res.headers), body: text }
    return { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after'), ms: performance.now() - started, reply }
  }

  async function worker (w: number) {
    for (let n = 0; !state.stopped; n++) {
      const requestId = `w${w}-${n}`
      const pet = { name: `Pet ${requestId}`, categoryId: w * 1_000_000 + n }
      const kind = n % 4
      let res: CallResult
      try {
        res = kind === 0
          ? await call('POST', '/v1/pets', requestId, { 'idempotency-key': `key-${requestId}` }, pet)
          : kind === 1
            ? await call('POST', '/v1/pets', requestId, {}, pet)
            : kind === 2
              // No pet has this status: never a full page, so never served from memory.
              ? await call('GET', '/v1/pets?limit=20&status=pending', requestId)
              : await call('GET', `/v1/pets/${(acknowledged.at(-1) ?? first).id}`, requestId)
      } catch (error) {
        unexpected.push({ requestId, error: String(error) })
        await sleep(50)
        continue
      }
      slowest[kind] = Math.max(slowest[kind]!, res.ms)
      if (res.status === 503) {
        counts.unavailable++
        if (res.retryAfter !== '1' || !isError(res.reply, 503, 'unavailable', unavailable(requestId))) unexpected.push({ requestId, ...res })
      } else if (kind < 2 && res.status === 201) {
        counts.ok++
        const created = res.body as Pet
        if (typeof created.id !== 'number' || !isDeepStrictEqual(created, { id: created.id, ...pet })) unexpected.push({ requestId, ...res })
        else acknowledged.push(created)
      } else if (kind >= 2 && res.status === 200) {
        counts.ok++
        if (kind === 2 ? !isDeepStrictEqual(res.body, []) : typeof (res.body as Pet).id !== 'number') unexpected.push({ requestId, ...res })
      } else {
        unexpected.push({ requestId, ...res })
      }
    }
  }

  const running = Array.from({ length: WORKERS }, (_, w) => worker(w))
  return {
    acknowledged,
    unexpected,
    counts,
    slowest,
    call,
    async stop () {
      state.stopped = true
      await Promise.all(running)
    }
  }
}

function isDeepStrictEqual (a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b)
    return true
  } catch {
    return false
  }
}

/** Milliseconds until /readyz replies 200; fails past READY_WITHIN_MS. */
async function readyAfter (load: ReturnType<typeof startLoad>, label: string): Promise<number> {
  const started = performance.now()
  for (let n = 0; ; n++) {
    const res = await load.call('GET', '/readyz', `${label}-${n}`)
    const ms = performance.now() - started
    if (res.status === 200) {
      assert.deepEqual(res.body, { status: 'ready' })
      return ms
    }
    assert.ok(ms < READY_WITHIN_MS, `not ready ${ms} ms after the link was back: ${JSON.stringify(res.body)}`)
    await sleep(50)
  }
}

/** Every pet created with 201 is in the store, as its response gave it. */
async function assertNoneLost (setup: Store, acknowledged: Pet[]) {
  const stored = new Map((await setup.listPets({ limit: 1_000_000 })).map((pet) => [Number(pet.id), pet]))
  const lost = acknowledged.filter((pet) => {
    const found = stored.get(pet.id)
    return !found || found.name !== pet.name || Number(found.categoryId) !== pet.categoryId
  })
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged creates are not in the store`)
  return stored.size
}

function assertAlive (server: ServerProcess, when: string) {
  assert.deepEqual({ exitCode: server.child.exitCode, signal: server.child.signalCode }, { exitCode: null, signal: null },
    `the server exited ${when}: ${server.stderr().slice(-2000)}`)
}

test('a link to PostgreSQL cut under load, 10 times: each request gets 200/201 or 503 unavailable, the process stays up, ready again within seconds, no acknowledged create lost', { timeout: 60_000 }, async (t) => {
  const { setup, proxy, server, key, first } = await serverBehindProxyWithAPet(t)
  const load = startLoad(server, key, first)
  t.after(() => load.stop())

  const cutPerRound: number[] = []
  for (let round = 1; round <= ROUNDS; round++) {
    // Steady load first, so the connections are busy when the link goes.
    await sleep(400)
    cutPerRound.push(proxy.cut(round % 2 === 0 ? 'reset' : 'close'))
    await sleep(300)
    assertAlive(server, `after cut ${round}`)
    assert.deepEqual(load.unexpected, [], `after cut ${round}`)
  }
  await load.stop()
  const readyMs = await readyAfter(load, 'after-cuts-ready')
  assertAlive(server, 'after the rounds')
  assert.deepEqual(load.unexpected, [])
  const stored = await assertNoneLost(setup, load.acknowledged)
  assert.ok(load.counts.unavailable > 0, 'no request was running on a connection when it was cut: the test proved nothing')
  t.diagnostic(`connections cut per round ${cutPerRound.join(',')}; responses ${load.counts.ok} ok, ${load.counts.unavailable} 503; ` +
    `${load.acknowledged.length} creates acknowledged, all stored (${stored} pets stored); slowest responses (keyed create, create, list, get) ${load.slowest.map(Math.round).join(', ')} ms; ready ${Math.round(readyMs)} ms after the last cut's load stopped`)
})

test('a black hole on the link to PostgreSQL under load: requests get 503 unavailable within the documented bound, never hang; ready within seconds once it forwards again', { timeout: 60_000 }, async (t) => {
  const { setup, proxy, server, key, first } = await serverBehindProxyWithAPet(t)
  const load = startLoad(server, key, first)
  t.after(() => load.stop())

  await sleep(500)
  const before = { ...load.counts }
  proxy.setMode('blackhole')
  // Long enough for every connection to be given up once and new ones to time out connecting.
  await sleep(STATEMENT_TIMEOUT_MS + 1000 + CONNECT_TIMEOUT_MS * 3)
  assertAlive(server, 'in the black hole')
  const during = { ok: load.counts.ok - before.ok, unavailable: load.counts.unavailable - before.unavailable }
  proxy.setMode('forward')
  const readyMs = await readyAfter(load, 'after-blackhole-ready')
  await sleep(300)
  await load.stop()

  assertAlive(server, 'after the black hole')
  assert.deepEqual(load.unexpected, [])
  assert.ok(during.unavailable > 0, 'no request got 503 in the black hole')
  const [keyedCreate, create, list, get] = load.slowest
  for (const [kind, ms] of Object.entries({ keyedCreate, list, get })) assert.ok(ms! < RESPONSE_BOUND_MS, `slowest ${kind} ${ms} ms, bound ${RESPONSE_BOUND_MS} ms`)
  assert.ok(create! < BATCHED_CREATE_BOUND_MS, `slowest create without Idempotency-Key ${create} ms, bound ${BATCHED_CREATE_BOUND_MS} ms`)
  const stored = await assertNoneLost(setup, load.acknowledged)
  t.diagnostic(`in the black hole ${during.ok} ok, ${during.unavailable} 503; slowest responses (keyed create, create, list, get) ${load.slowest.map(Math.round).join(', ')} ms (bounds ${RESPONSE_BOUND_MS}, ${BATCHED_CREATE_BOUND_MS} ms); ` +
    `ready ${Math.round(readyMs)} ms after forwarding again; ${load.acknowledged.length} creates acknowledged, all stored (${stored} pets stored)`)
})
