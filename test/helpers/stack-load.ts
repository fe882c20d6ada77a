import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { Agent } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { TestContext } from 'node:test'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { instanceEnvironment, readCompose, withoutSecrets } from './compose.ts'
import { freePort, startHaproxy, type Haproxy } from './haproxy.ts'
import { parseExact, plannedCreate, postCreate, samePet, errorCode, type ExactPet } from './load.ts'
import { freshSchema } from './pg-schema.ts'
import { runCli, stopProcess } from './processes.ts'
import { send, startServer, type HttpResponse, type ServerProcess } from './server-process.ts'

/**
 * Steady load through the balancer, as clients that never retry: workers send listings, getPet
 * of pets created before, and creates with an Idempotency-Key, each request once. Anything but
 * the expected response is a failure: a connection error, a 5xx, any other status, a wrong pet.
 */

export interface Sample { startedAt: number, ms: number }

export interface LoadRun {
  /** Stops the workers and resolves once each has finished its request in flight. */
  stop(): Promise<void>
  samples: Sample[]
  failures: string[]
  /** Every pet acknowledged with 201, by id, as the response gave it. */
  acknowledged: Map<string, ExactPet>
}

const LIST_PATHS = ['/v1/pets', '/v1/pets?limit=100', '/v1/pets?status=available&limit=5']

export function startLoad (port: number, key: string, workers: number): LoadRun {
  const agent = new Agent({ keepAlive: true, maxSockets: workers })
  const run: Omit<LoadRun, 'stop'> = { samples: [], failures: [], acknowledged: new Map() }
  const ids: string[] = []
  const stopping = new AbortController()

  const once = async (w: number, n: number) => {
    const kind = n % 10
    const startedAt = performance.now()
    const sample = () => run.samples.push({ startedAt, ms: performance.now() - startedAt })
    const expect = (what: string, response: HttpResponse, status: number) => {
      if (response.status === status) return true
      run.failures.push(`${what}: ${response.status} ${response.body.slice(0, 200)}`)
      return false
    }
    try {
      if (kind < 3 || ids.length === 0) {
        const create = plannedCreate(`stack-${w}`)
        const response = await postCreate(agent, port, key, create)
        sample()
        if (!expect('create', response, 201)) return
        const pet = parseExact(response.body)
        if (!samePet({ ...create.expected, id: pet.id! }, pet)) run.failures.push(`create returned another pet: ${response.body}`)
        run.acknowledged.set(pet.id!, pet)
        ids.push(pet.id!)
      } else if (kind < 6) {
        const id = ids[Math.floor(Math.random() * ids.length)]!
        const response = await send(agent, port, 'GET', `/v1/pets/${id}`, { authorization: `Bearer ${key}` })
        sample()
        if (expect(`getPet ${id}`, response, 200) && !samePet(parseExact(response.body), run.acknowledged.get(id)!)) {
          run.failures.push(`getPet ${id} returned another pet: ${response.body}`)
        }
      } else {
        const path = LIST_PATHS[n % LIST_PATHS.length]!
        const response = await send(agent, port, 'GET', path, { authorization: `Bearer ${key}` })
        sample()
        expect(`listPets ${path}`, response, 200)
      }
    } catch (error) {
      sample()
      run.failures.push(`request ${n} of worker ${w}: ${errorCode(error)}`)
    }
  }

  const running = Array.from({ length: workers }, async (_, w) => {
    for (let n = w; !stopping.signal.aborted; n++) await once(w, n)
  })
  return {
    ...run,
    async stop () {
      stopping.abort()
      await Promise.all(running)
      agent.destroy()
    }
  }
}

/** The value below which `fraction` of the durations fall. */
export function percentile (samples: Sample[], fraction: number): number {
  const sorted = samples.map((sample) => sample.ms).sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? 0
}

export interface Stack {
  haproxy: Haproxy
  instances: ServerProcess[]
  /** A valid API key. */
  key: string
}

/**
 * compose.yaml's topology as test/deploy/stack.test.ts runs it: a fresh PostgreSQL schema, migrated,
 * with one key; two src/server.ts with the instances' compose environment (loopback addresses,
 * TRUST_PROXY the balancer's 127.0.0.1, a Redis key prefix of their own), and `env` over it;
 * haproxy on the shipped haproxy.cfg with both in rotation. Everything stops when the test ends.
 */
export async function startStack (t: TestContext, redisUrl: string, env: Record<string, string>): Promise<Stack> {
  const running: Array<{ stop(): Promise<unknown> }> = []
  // Registered before the schema's drop, so all have stopped when it runs.
  t.after(async () => { for (const child of running.reverse()) await child.stop() })
  const { url: databaseUrl } = freshSchema(t)
  const migrated = await runCli(['migrate'], { DATABASE_URL: databaseUrl })
  assert.equal(migrated.code, 0, migrated.stderr)
  const created = await runCli(['keys', 'create', '--name', 'stack'], { DATABASE_URL: databaseUrl })
  assert.equal(created.code, 0, created.stderr)

  const ports = [await freePort(), await freePort()] as const
  const haproxyPort = await freePort()
  // One prefix for both instances, which count together in Redis.
  const redisKeyPrefix = `petstore-stack-${randomBytes(4).toString('hex')}:`
  const instances = await Promise.all(ports.map(async (port) => {
    const server = await startServer({
      // compose's DATABASE_URL_FILE names a secret; the test schema's URL replaces it.
      ...withoutSecrets(instanceEnvironment(readCompose()['petstore-1']!)),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: redisKeyPrefix,
      HOST: '127.0.0.1',
      TRUST_PROXY: '127.0.0.1',
      // Metrics on a free port of their own, so that several instances share the machine.
      METRICS_PORT: '0',
      ...env,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${haproxyPort}/v1`
    }, 60_000)
    running.push(server)
    return server
  }))
  const haproxy = await startHaproxy([`127.0.0.1:${ports[0]}`, `127.0.0.1:${ports[1]}`], haproxyPort)
  running.push({ stop: () => stopProcess(haproxy.child) })
  await haproxy.waitUp('petstore-1')
  await haproxy.waitUp('petstore-2')
  return { haproxy, instances, key: created.stdout.trim() }
}

export interface StatusSample extends Sample { status: number }

export interface ReadLoad {
  stop(): Promise<void>
  samples: StatusSample[]
}

/**
 * Keyed listings through the balancer from one client address, a new connection for each
 * request as many clients make them (a connection that waits to be accepted shows in the
 * time). A connection error counts as status 0.
 */
export function startKeyedReads (port: number, key: string, localAddress: string, workers: number): ReadLoad {
  const agent = new Agent({ keepAlive: false, localAddress })
  const samples: StatusSample[] = []
  const stopping = new AbortController()
  const running = Array.from({ length: workers }, async () => {
    while (!stopping.signal.aborted) {
      const startedAt = performance.now()
      const status = await send(agent, port, 'GET', '/v1/pets?limit=10', { authorization: `Bearer ${key}` }).then((response) => response.status, () => 0)
      samples.push({ startedAt, ms: performance.now() - startedAt, status })
    }
  })
  return {
    samples,
    async stop () {
      stopping.abort()
      await Promise.all(running)
      agent.destroy()
    }
  }
}

/**
 * Hostile clients, in a worker thread so that their sockets do not slow the measuring client's
 * event loop:
 * - slow bodies: from each of `slowAddresses`, `slowPerAddress` connections that send a
 *   create's headers without a key, announce a 1000-byte body and send one byte of it every
 *   `slowByteEveryMs`; each connection the balancer closes is opened again;
 * - a flood: `floodAddress` keeps `floodConnections` connections open that send nothing,
 *   dialling at most `floodDialsPerSecond`, and dials again for each one closed.
 */
export interface HostilePlan {
  port: number
  slowAddresses: string[]
  slowPerAddress: number
  slowByteEveryMs: number
  floodAddress: string
  floodConnections: number
  floodDialsPerSecond: number
}

export interface HostileReport {
  slow: {
    /** Connections made, reopened ones included. */
    connected: number
    /** The first status line's code of each connection that got a response, counted. */
    statuses: Record<string, number>
    /** The longest a connection lived from its connect to a response or close. */
    longestMs: number
  }
  flood: {
    dialled: number
    /** Connections that were made before the balancer closed them. */
    connected: number
    /** Connections the balancer closed within 100 ms of their connect. */
    closedAtOnce: number
    /** The most connections open at once. */
    mostOpen: number
  }
}

export async function startHostile (plan: HostilePlan): Promise<{ stop(): Promise<HostileReport> }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { hostile: plan } })
  const report = new Promise<HostileReport>((resolve, reject) => {
    worker.on('message', (message: { report?: HostileReport }) => { if (message.report) resolve(message.report) })
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the hostile clients' worker exited (${code}) without a report`)))
  })
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (message: { started?: boolean }) => { if (message.started) resolve() })
    worker.once('error', reject)
  })
  return {
    async stop () {
      worker.postMessage('stop')
      const result = await report
      await worker.terminate()
      return result
    }
  }
}

function runHostile (plan: HostilePlan): void {
  let stopping = false
  const sockets = new Set<Socket>()
  const report: HostileReport = { slow: { connected: 0, statuses: {}, longestMs: 0 }, flood: { dialled: 0, connected: 0, closedAtOnce: 0, mostOpen: 0 } }
  const dial = (localAddress: string) => {
    const socket = connect({ host: '127.0.0.1', port: plan.port, localAddress })
    sockets.add(socket)
    socket.on('error', () => {})
    socket.once('close', () => sockets.delete(socket))
    return socket
  }

  const slow = (localAddress: string) => {
    if (stopping) return
    const socket = dial(localAddress)
    let connectedAt = 0
    let responded = false
    let timer: NodeJS.Timeout | undefined
    socket.once('connect', () => {
      connectedAt = performance.now()
      report.slow.connected++
      socket.write('POST /v1/pets HTTP/1.1\r\nHost: petstore\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{')
      timer = setInterval(() => socket.write(' '), plan.slowByteEveryMs)
    })
    socket.on('data', (chunk: Buffer) => {
      if (responded) return
      responded = true
      const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'other'
      report.slow.statuses[status] = (report.slow.statuses[status] ?? 0) + 1
    })
    socket.once('close', () => {
      clearInterval(timer)
      if (connectedAt > 0 && !stopping) report.slow.longestMs = Math.max(report.slow.longestMs, performance.now() - connectedAt)
      setTimeout(() => slow(localAddress), 50)
    })
  }

  let flooding = 0
  const flood = () => {
    flooding++
    report.flood.dialled++
    const socket = dial(plan.floodAddress)
    // Read (and drop) what comes, such as a 408, so that a close is seen.
    socket.resume()
    let connectedAt = 0
    socket.once('connect', () => { connectedAt = performance.now(); report.flood.connected++ })
    socket.once('close', () => {
      flooding--
      if (connectedAt > 0 && performance.now() - connectedAt < 100) report.flood.closedAtOnce++
    })
  }
  const TICK_MS = 20
  const floodTimer = setInterval(() => {
    report.flood.mostOpen = Math.max(report.flood.mostOpen, flooding)
    for (let i = 0; i < plan.floodDialsPerSecond * TICK_MS / 1000 && flooding < plan.floodConnections; i++) flood()
  }, TICK_MS)

  // The slow clients start over the first second.
  const slowTotal = plan.slowAddresses.length * plan.slowPerAddress
  plan.slowAddresses.forEach((address, a) => {
    for (let i = 0; i < plan.slowPerAddress; i++) setTimeout(() => slow(address), (a * plan.slowPerAddress + i) * 1000 / slowTotal)
  })
  parentPort!.postMessage({ started: true })
  parentPort!.once('message', () => {
    stopping = true
    clearInterval(floodTimer)
    for (const socket of sockets) socket.destroy()
    parentPort!.postMessage({ report })
  })
}

if (!isMainThread && (workerData as { hostile?: HostilePlan } | null)?.hostile) runHostile((workerData as { hostile: HostilePlan }).hostile)
