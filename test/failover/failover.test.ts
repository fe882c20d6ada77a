import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createPetstoreClient, type PetstoreClient } from '@petstore/client'
import pg from 'pg'
import { loadMigrations } from '../../src/store/migrations.ts'
import { freePort, haproxyMissing, startHaproxy, type Haproxy } from '../helpers/haproxy.ts'
import { runCli, stopProcess } from '../helpers/processes.ts'
import { startServer, type ServerProcess } from '../helpers/server-process.ts'
import { createFormation, pgAutoctlMissing, type Formation, type FormationNode } from './formation.ts'
import { skipOrFail } from './skip.ts'

/**
 * Losing the database primary loses nothing. Two instances behind haproxy on the shipped
 * haproxy.cfg, on a pg_auto_failover formation (a primary and a synchronous standby) through
 * its multi-host DATABASE_URL, under steady creates and reads from `@petstore/client`, which
 * retries 503s and lost responses, creates with their Idempotency-Key. Two events: a planned
 * switchover, and the primary's machine lost (SIGKILL to its pg_autoctl and every PostgreSQL
 * process), after which the old node comes back as the standby. Each event reports what the
 * client and the wire saw; none may lose an acknowledged create, make a pet twice or end an
 * instance, the switchover may fail no call, and creates work again within 15 s of the kill.
 * A cursor walk with limit=7 runs across the failover and must match the new primary's rows,
 * and a full page's ETag taken before it is answered with 304 (the same tag) after it.
 * Before all that, the URI `pg_autoctl show uri` printed, unedited, is the DATABASE_URL of
 * `petstore migrate` and `petstore keys create`, which must work.
 */

const WORKERS = 6
// Each worker pauses between calls: steady load, not a benchmark on a shared 2-core machine.
const PAUSE_MS = 20
const STEADY_MS = 3000
// Load after each event once the formation is whole again, so both ends see traffic.
const AFTER_EVENT_MS = 3000
const CREATES_BACK_WITHIN_MS = 15_000
const WALK_LIMIT = 7
const WALK_PAGE_EVERY_MS = 150
const WALK_TIMEOUT_MS = 60_000
// The client retries for about 20 s (waits of 0.1 s doubling to 2 s, or 1 s where a 503 says
// Retry-After: 1): longer than a switchover keeps the primary away.
const RETRY = { attempts: 12, maxDelayMs: 2000, baseDelayMs: 200 }
// Besides the load, one create every 100 ms sent once, never retried: when creates work again
// is when the service takes them, not when a client's backoff happens to ask next.
const PROBE_EVERY_MS = 100

interface Call { kind: 'create' | 'list', startedAt: number, endedAt: number, ok: boolean, error?: string }
interface Attempt { method: string, startedAt: number, endedAt: number, status: number }
interface Acknowledged { id: string, name: string, endedAt: number }
interface Probe { startedAt: number, endedAt: number, ok: boolean }

class Load {
  calls: Call[] = []
  attempts: Attempt[] = []
  acknowledged: Acknowledged[] = []
  probes: Probe[] = []
  readonly #stopping = new AbortController()
  readonly #running: Promise<void>[]
  readonly client: PetstoreClient
  readonly #probe: PetstoreClient

  constructor (baseUrl: string, apiKey: string, workers: number) {
    const recording: typeof fetch = async (input, init) => {
      const startedAt = performance.now()
      const method = init?.method ?? 'GET'
      try {
        const response = await fetch(input, init)
        this.attempts.push({ method, startedAt, endedAt: performance.now(), status: response.status })
        return response
      } catch (error) {
        this.attempts.push({ method, startedAt, endedAt: performance.now(), status: 0 })
        throw error
      }
    }
    this.client = createPetstoreClient({ baseUrl, apiKey, fetch: recording, retry: RETRY, timeoutMs: 10_000 })
    this.#probe = createPetstoreClient({ baseUrl, apiKey, retry: false, timeoutMs: 5000 })
    this.#running = [...Array.from({ length: workers }, (_, w) => this.#work(w)), this.#probing()]
  }

  async #probing (): Promise<void> {
    for (let n = 0; !this.#stopping.signal.aborted; n++) {
      const startedAt = performance.now()
      const name = `probe-${n}-${Math.random().toString(36).slice(2, 10)}`
      try {
        const pet = await this.#probe.pets.create({ name, categoryId: n }, { signal: this.#stopping.signal })
        this.acknowledged.push({ id: String(pet.id), name, endedAt: performance.now() })
        this.probes.push({ startedAt, endedAt: performance.now(), ok: true })
      } catch {
        if (this.#stopping.signal.aborted) return
        this.probes.push({ startedAt, endedAt: performance.now(), ok: false })
      }
      await sleep(Math.max(0, startedAt + PROBE_EVERY_MS - performance.now()))
    }
  }

  async #work (w: number): Promise<void> {
    for (let n = 0; !this.#stopping.signal.aborted; n++) {
      const startedAt = performance.now()
      const kind = n % 3 === 2 ? 'list' : 'create'
      try {
        if (kind === 'create') {
          // A unique name: a retried create that made a second pet shows as a name seen twice.
          const name = `failover-${w}-${n}-${Math.random().toString(36).slice(2, 10)}`
          const pet = await this.client.pets.create({ name, categoryId: n, status: 'available' }, { signal: this.#stopping.signal })
          assert.equal(pet.name, name)
          this.acknowledged.push({ id: String(pet.id), name, endedAt: performance.now() })
        } else {
          await this.client.pets.list({ ...(n % 2 === 0 ? { limit: 20 } : { limit: 5, status: 'available' }), signal: this.#stopping.signal })
        }
        this.calls.push({ kind, startedAt, endedAt: performance.now(), ok: true })
      } catch (error) {
        // A call the test itself ended by stopping: neither made nor failed.
        if (this.#stopping.signal.aborted) return
        this.calls.push({ kind, startedAt, endedAt: performance.now(), ok: false, error: `${(error as Error).name}: ${(error as Error).message}` })
      }
      await sleep(PAUSE_MS)
    }
  }

  /** Ends the calls in flight at once: a test that failed half-way does not wait out their retries. */
  async stop (): Promise<void> {
    this.#stopping.abort()
    await Promise.all(this.#running)
  }
}

/** Follows the cursor from the first page with limit=7, pacing itself until `paceUntil()` is passed; a failed call is asked again. */
async function walk (client: PetstoreClient, paceUntil: () => number): Promise<{ ids: string[], failedCalls: number, startedAt: number, endedAt: number }> {
  const ids: string[] = []
  let failedCalls = 0
  let cursor: string | undefined
  const startedAt = performance.now()
  const deadline = startedAt + WALK_TIMEOUT_MS
  for (;;) {
    assert.ok(performance.now() < deadline, `the cursor walk did not reach its last page within ${WALK_TIMEOUT_MS} ms`)
    try {
      const page = await client.pets.list({ limit: WALK_LIMIT, ...(cursor !== undefined && { cursor }) })
      ids.push(...page.pets.map((pet) => String(pet.id)))
      if (page.next === undefined) return { ids, failedCalls, startedAt, endedAt: performance.now() }
      cursor = page.next
    } catch {
      failedCalls++
    }
    if (performance.now() < paceUntil()) await sleep(WALK_PAGE_EVERY_MS)
  }
}

async function rowsOn (node: FormationNode): Promise<Array<{ id: string, name: string }>> {
  const client = new pg.Client({ connectionString: node.url, connectionTimeoutMillis: 5000, query_timeout: 10_000 })
  await client.connect()
  try {
    return (await client.query<{ id: string, name: string }>('SELECT id::text AS id, name FROM petstore.pets ORDER BY pets.id')).rows
  } finally {
    await client.end()
  }
}

interface EventReport {
  calls: number
  failedCalls: number
  failures: string[]
  longestCallMs: number
  wire5xx: number
  haproxy5xx: number
  probes: number
  failedProbes: number
  acknowledged: number
  missing: number
  duplicates: number
  longestWithoutCreateMs: number
  instanceExits: number
}

async function report (load: Load, haproxy: Haproxy, haproxy5xxBefore: number, instances: ServerProcess[], from: number, to: number, primary: FormationNode): Promise<EventReport> {
  const calls = load.calls.filter((call) => call.startedAt >= from && call.startedAt < to)
  const acknowledged = load.acknowledged.filter((pet) => pet.endedAt >= from && pet.endedAt < to)
  // Taken before the rows are read: a pet acknowledged while they are read may not be in them.
  const acknowledgedSoFar = [...load.acknowledged]
  const rows = await rowsOn(primary)
  const stored = new Map(rows.map((row) => [row.id, row.name]))
  const names = new Map<string, number>()
  for (const row of rows) names.set(row.name, (names.get(row.name) ?? 0) + 1)
  const created = load.acknowledged.map((pet) => pet.endedAt).filter((at) => at >= from && at < to).sort((a, b) => a - b)
  let longest = 0
  let previous = from
  for (const at of [...created, to]) { longest = Math.max(longest, at - previous); previous = at }
  return {
    calls: calls.length,
    failedCalls: calls.filter((call) => !call.ok).length,
    longestCallMs: Math.round(Math.max(0, ...calls.map((call) => call.endedAt - call.startedAt))),
    failures: [...new Set(calls.filter((call) => !call.ok).map((call) => `${call.kind}: ${call.error}`))].slice(0, 5),
    wire5xx: load.attempts.filter((attempt) => attempt.startedAt >= from && attempt.startedAt < to && attempt.status >= 500).length,
    haproxy5xx: Number((await haproxy.frontend()).hrsp_5xx) - haproxy5xxBefore,
    probes: load.probes.filter((probe) => probe.startedAt >= from && probe.startedAt < to).length,
    failedProbes: load.probes.filter((probe) => probe.startedAt >= from && probe.startedAt < to && !probe.ok).length,
    acknowledged: acknowledged.length,
    // Every pet acknowledged so far, not only in this event: none may go missing later either.
    missing: acknowledgedSoFar.filter((pet) => stored.get(pet.id) !== pet.name).length,
    duplicates: [...names.values()].filter((count) => count > 1).length,
    longestWithoutCreateMs: Math.round(longest),
    instanceExits: instances.filter((instance) => instance.child.exitCode !== null || instance.child.signalCode !== null).length
  }
}

function describe (t: TestContext, name: string, r: EventReport): void {
  t.diagnostic(`${name}: calls ${r.calls}, failed ${r.failedCalls}, the longest ${r.longestCallMs} ms; 5xx on the wire ${r.wire5xx} (haproxy counted ${r.haproxy5xx}, probes included); ` +
    `probe creates (sent once) ${r.probes}, failed ${r.failedProbes}; ` +
    `acknowledged creates ${r.acknowledged}, missing on the new primary ${r.missing}; duplicate pets ${r.duplicates}; ` +
    `longest stretch without a successful create ${r.longestWithoutCreateMs} ms; instances exited ${r.instanceExits}` +
    (r.failures.length > 0 ? `; failures: ${r.failures.join(' | ')}` : ''))
}

test('losing the PostgreSQL primary under load, by switchover and by killing it, loses no acknowledged create and makes no pet twice; the switchover fails no call, creates work again within 15 s of the kill, and a cursor walk across the failover never skips or repeats a pet', { timeout: 240_000 }, async (t) => {
  if (skipOrFail(t, pgAutoctlMissing())) return
  if (skipOrFail(t, haproxyMissing())) return
  const began = performance.now()

  // Stopped last started first: the load, haproxy, the instances, the formation.
  const cleanups: Array<() => Promise<unknown>> = []
  t.after(async () => { for (const cleanup of cleanups.reverse()) await cleanup() })

  const formation: Formation = await createFormation()
  cleanups.push(() => formation.destroy())
  t.diagnostic(`formation up in ${ms(performance.now() - began)}: ${formation.uri}`)
  // The URI pg_autoctl printed works as DATABASE_URL as it is: its sslmode=prefer is TLS when a
  // node offers it, and these nodes have none (--no-ssl). It names no user; PGUSER gives one, as
  // it would to libpq. Its tables go to the database's public schema; the load uses its own.
  const [node1, node2] = formation.nodes
  assert.equal(formation.shownUri, `postgres://127.0.0.1:${node1.port},127.0.0.1:${node2.port}/postgres?target_session_attrs=read-write&sslmode=prefer`)
  const printed = { DATABASE_URL: formation.shownUri, PGUSER: 'postgres' }
  const migrations = loadMigrations('postgres').map((m) => `${String(m.version).padStart(3, '0')}-${m.name}`)
  assert.deepEqual(await runCli(['migrate', '--json'], printed), { code: 0, stdout: JSON.stringify({ applied: migrations }) + '\n', stderr: '' }, 'migrate on the printed URI')
  const printedKey = await runCli(['keys', 'create', '--name', 'printed-uri'], printed)
  assert.deepEqual({ code: printedKey.code, key: /^psk_[A-Za-z0-9_-]{43}\n$/.test(printedKey.stdout) }, { code: 0, key: true }, printedKey.stderr)
  const listed = await runCli(['keys', 'list', '--json'], printed)
  assert.deepEqual(JSON.parse(listed.stdout).map((row: { id: number, name: string }) => [row.id, row.name]), [[1, 'printed-uri']], listed.stderr)

  // The rest as docs/operations/high-availability.md says: the printed URI with the user and a schema of its own.
  const databaseUrl = `${formation.uri}&schema=petstore`
  const migrated = await runCli(['migrate'], { DATABASE_URL: databaseUrl })
  assert.equal(migrated.code, 0, migrated.stderr)
  const created = await runCli(['keys', 'create', '--name', 'failover'], { DATABASE_URL: databaseUrl })
  assert.equal(created.code, 0, created.stderr)
  const key = created.stdout.trim()

  const ports = [await freePort(), await freePort()] as const
  const haproxyPort = await freePort()
  const instances = await Promise.all(ports.map(async (port) => {
    const server = await startServer({
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${haproxyPort}/v1`,
      TRUST_PROXY: '127.0.0.1',
      // The load is above one key's limit, and shedding would reply 503 by design.
      RATE_LIMIT_PER_MINUTE: '100000000',
      MAX_EVENT_LOOP_DELAY_MS: '0'
    }, 60_000)
    cleanups.push(() => server.stop())
    return server
  }))
  const haproxy = await startHaproxy([`127.0.0.1:${ports[0]}`, `127.0.0.1:${ports[1]}`], haproxyPort)
  cleanups.push(() => stopProcess(haproxy.child))
  await haproxy.waitUp('petstore-1')
  await haproxy.waitUp('petstore-2')
  const baseUrl = `http://127.0.0.1:${haproxyPort}/v1`

  const load = new Load(baseUrl, key, WORKERS)
  cleanups.push(() => load.stop())
  await sleep(STEADY_MS)
  const haproxy5xx = async () => Number((await haproxy.frontend()).hrsp_5xx)

  // (a) A planned switchover.
  let from = performance.now()
  let before5xx = await haproxy5xx()
  const switched = await formation.switchover()
  await sleep(AFTER_EVENT_MS)
  const switchover = await report(load, haproxy, before5xx, instances, from, performance.now(), switched.to)
  t.diagnostic(`switchover ${switched.from.name} -> ${switched.to.name}: formation settled in ${ms(switched.ms)}`)
  describe(t, 'switchover', switchover)

  // A full page's tag, asked of one instance only: the other first reads the page after the
  // failover, from the new primary, where the same rows must give the same tag.
  const fullPageBefore = await firstPage(ports[0], key)

  // (b) The primary's machine goes; the standby is promoted; the old node comes back as standby.
  let promotedAt = Infinity
  const walking = walk(createPetstoreClient({ baseUrl, apiKey: key, retry: RETRY, timeoutMs: 10_000 }), () => promotedAt + 2000)
  await sleep(1000)
  from = performance.now()
  before5xx = await haproxy5xx()
  const { node: killed, killedAt } = await formation.killPrimary()
  const survivor = formation.nodes.find((node) => node !== killed)!
  await formation.waitWritable(survivor, 30_000)
  promotedAt = performance.now()
  // The first probe create sent after the kill that got 201.
  const deadline = killedAt + 30_000
  let createsBack: Probe | undefined
  while (!(createsBack = load.probes.find((probe) => probe.startedAt > killedAt && probe.ok)) && performance.now() < deadline) await sleep(100)
  const rejoined = await formation.restartNode(killed)
  await sleep(AFTER_EVENT_MS)
  await load.stop()
  const failover = await report(load, haproxy, before5xx, instances, from, performance.now(), survivor)
  const walked = await walking
  t.diagnostic(`failover: ${killed.name} killed; ${survivor.name} took writes after ${ms(promotedAt - killedAt)}; ` +
    `the first probe create sent after the kill got 201 after ${createsBack ? ms(createsBack.endedAt - killedAt) : 'never'}; ` +
    `${killed.name} back as the synchronous standby ${ms(rejoined.ms)} after its restart`)
  describe(t, 'failover', failover)

  assert.deepEqual(await firstPage(ports[1], key, fullPageBefore.etag), notModified(fullPageBefore), 'a full page\'s tag after the failover')
  assert.deepEqual(await firstPage(ports[1], key), fullPageBefore, 'a full page after the failover')

  const rows = await rowsOn(survivor)
  const last = walked.ids.at(-1)
  const expected = rows.map((row) => row.id).filter((id) => last !== undefined && BigInt(id) <= BigInt(last))
  t.diagnostic(`cursor walk (limit ${WALK_LIMIT}): ${walked.ids.length} pets in ${ms(walked.endedAt - walked.startedAt)}, ${walked.failedCalls} calls asked again; ` +
    `the new primary has ${expected.length} up to its last; whole test ${ms(performance.now() - began)}`)

  assert.deepEqual({ missing: switchover.missing, duplicates: switchover.duplicates, instanceExits: switchover.instanceExits, failedCalls: switchover.failedCalls, failures: switchover.failures },
    { missing: 0, duplicates: 0, instanceExits: 0, failedCalls: 0, failures: [] }, 'across the switchover')
  assert.deepEqual({ missing: failover.missing, duplicates: failover.duplicates, instanceExits: failover.instanceExits },
    { missing: 0, duplicates: 0, instanceExits: 0 }, 'across the failover')
  assert.ok(createsBack && createsBack.endedAt - killedAt <= CREATES_BACK_WITHIN_MS, `creates did not work again within ${CREATES_BACK_WITHIN_MS} ms of the kill`)
  assert.ok(walked.startedAt < killedAt && walked.endedAt > promotedAt, 'the cursor walk ran across the failover')
  assert.equal(new Set(walked.ids).size, walked.ids.length, 'the cursor walk repeated a pet')
  assert.deepEqual(walked.ids, expected, 'the cursor walk skipped a pet, or listed one the new primary does not have')
  assert.ok(load.acknowledged.length > 0 && load.calls.filter((call) => call.kind === 'list' && call.ok).length > 0)
})

/** Not asked by the load or the walk: no instance has it before the test asks. */
const FULL_PAGE_QUERY = 'limit=3'

interface TaggedPage { status: number, etag: string | null, cacheControl: string | null, link: string | null, body: string }

/** The first page of three pets, from one instance directly, whole but for the fields every reply varies in. */
async function firstPage (port: number, key: string, ifNoneMatch?: string | null): Promise<TaggedPage> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/pets?${FULL_PAGE_QUERY}`, {
    headers: { authorization: `Bearer ${key}`, ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}) },
    signal: AbortSignal.timeout(10_000)
  })
  const page = { status: response.status, etag: response.headers.get('etag'), cacheControl: response.headers.get('cache-control'), link: response.headers.get('link'), body: await response.text() }
  if (ifNoneMatch === undefined) {
    assert.equal(page.status, 200, page.body)
    assert.equal(page.cacheControl, 'private, max-age=31536000, immutable', 'a full page is final')
    assert.equal((JSON.parse(page.body) as unknown[]).length, 3)
  }
  return page
}

const notModified = (page: TaggedPage): TaggedPage => ({ ...page, status: 304, body: '' })

const ms = (value: number) => `${Math.round(value)} ms`
