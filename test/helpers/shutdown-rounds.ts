import { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { openStore } from '../../src/store/index.ts'
import { addTally, emptyTally, errorCode, plannedCreate, postCreate, randomBetween, type FaultTally } from './load.ts'
import { send, startServer } from './server-process.ts'

/**
 * Graceful shutdown. Per round: clients on keep-alive connections send creates and lists
 * without pause; SIGTERM comes at a random moment. Like a load balancer, the clients stop
 * sending new requests once /readyz replies 503, and go on until then. Must hold:
 * - no request fails (no reset, no hang-up, no 5xx): only a connection the server no longer
 *   accepts may be refused;
 * - readiness turns false soon after the signal and stays so, while responses still come, each
 *   with Connection: close from then on;
 * - the process exits 0 within the drain window plus a margin;
 * - every acknowledged create is in the store afterwards.
 */

export interface ShutdownOptions {
  storeUrl: string
  key: string
  rounds: number
  drainMs?: number
  workers?: number
  progress?: (line: string) => void
}

interface Outcome { sentAt: number, status?: number, connection?: string, failure?: string, petId?: string }

const EXIT_MARGIN_MS = 3000
// Between kill() and the server acting on the signal: at most this, even on a busy machine.
const SIGNAL_DELIVERY_MS = 1000

export async function shutdownRounds (options: ShutdownOptions): Promise<FaultTally> {
  let tally = emptyTally()
  for (let round = 1; round <= options.rounds; round++) {
    const result = await shutdownRound(options, round)
    tally = addTally(tally, result)
    options.progress?.(`shutdown round ${round}/${options.rounds}: ${result.requests} sent, ${result.acknowledged} acknowledged, lost ${result.lost}, 5xx ${result.serverErrors}, violations ${result.violations.length}`)
  }
  return tally
}

async function shutdownRound (options: ShutdownOptions, round: number): Promise<FaultTally> {
  const tally: FaultTally = { ...emptyTally(), runs: 1 }
  const drainMs = options.drainMs ?? 1000
  // Load shedding is off: on a busy test machine it would refuse the load with 503 by design.
  const server = await startServer({ DATABASE_URL: options.storeUrl, RATE_LIMIT_PER_MINUTE: '0', SHUTDOWN_DRAIN_MS: String(drainMs), MAX_EVENT_LOOP_DELAY_MS: '0' })
  const agent = new Agent({ keepAlive: true, maxSockets: options.workers ?? 8 })
  const outcomes: Outcome[] = []
  const probes: Array<{ startedAt: number, endedAt: number, status?: number, failure?: string }> = []
  let signalAt = Infinity
  // Set once the load balancer would have taken the instance out: no new requests after it.
  const stopSending = new AbortController()
  try {
    const worker = async (w: number) => {
      for (let n = 0; !stopSending.signal.aborted; n++) {
        const outcome: Outcome = { sentAt: Date.now() }
        outcomes.push(outcome)
        try {
          const response = n % 2 === 0
            ? await postCreate(agent, server.port, options.key, plannedCreate(`shutdown-r${round}-w${w}-${n}`))
            : await send(agent, server.port, 'GET', '/v1/pets?limit=5', { authorization: `Bearer ${options.key}` })
          outcome.status = response.status
          outcome.connection = String(response.headers.connection)
          if (response.status === 201) outcome.petId = JSON.parse(response.body).id.toString()
        } catch (error) {
          outcome.failure = errorCode(error)
          if (outcome.failure === 'ECONNREFUSED') return
        }
      }
    }
    const prober = async () => {
      while (!stopSending.signal.aborted) {
        const startedAt = Date.now()
        try {
          const response = await send(new Agent({ keepAlive: false }), server.port, 'GET', '/readyz')
          probes.push({ startedAt, endedAt: Date.now(), status: response.status })
          if (response.status === 503) stopSending.abort()
        } catch (error) {
          probes.push({ startedAt, endedAt: Date.now(), failure: errorCode(error) })
          stopSending.abort()
        }
        await sleep(20)
      }
    }
    const running = [...Array.from({ length: options.workers ?? 8 }, (_, w) => worker(w)), prober()]
    await sleep(randomBetween(200, 600))
    signalAt = Date.now()
    server.child.kill('SIGTERM')
    await Promise.all(running)
    const exit = await server.exited
    const tookMs = Date.now() - signalAt
    if (exit.code !== 0) tally.violations.push(`round ${round}: exit ${exit.code ?? exit.signal} on SIGTERM`)
    if (tookMs > drainMs + EXIT_MARGIN_MS) tally.violations.push(`round ${round}: exit took ${tookMs} ms, more than the drain of ${drainMs} ms plus ${EXIT_MARGIN_MS}`)
  } finally {
    agent.destroy()
    await server.stop('SIGKILL')
  }

  // The drain began no later than the end of the first probe that got 503; the server
  // turns readiness false and starts closing connections in one step.
  const drainSeenAt = probes.find((probe) => probe.status === 503)?.endedAt ?? Infinity
  tally.requests = outcomes.length
  for (const outcome of outcomes) {
    if (outcome.status === 201) tally.acknowledged++
    if (outcome.status !== undefined && outcome.status >= 500) tally.serverErrors++
    if (outcome.failure !== undefined && outcome.failure !== 'ECONNREFUSED') {
      tally.violations.push(`round ${round}: a request sent ${outcome.sentAt - signalAt} ms after the signal failed: ${outcome.failure}`)
    } else if (outcome.failure === 'ECONNREFUSED' && outcome.sentAt < signalAt) {
      tally.violations.push(`round ${round}: a request sent before the signal was refused`)
    } else if (outcome.status !== undefined && (outcome.status < 200 || outcome.status > 299)) {
      tally.violations.push(`round ${round}: a request got ${outcome.status}`)
    } else if (outcome.sentAt > drainSeenAt && outcome.connection !== 'close' && outcome.status !== undefined) {
      tally.violations.push(`round ${round}: a response during the drain kept its connection open`)
    }
  }
  if (drainSeenAt - signalAt > SIGNAL_DELIVERY_MS) tally.violations.push(`round ${round}: readiness still true ${drainSeenAt - signalAt} ms after the signal`)
  const after = probes.filter((probe) => probe.startedAt > drainSeenAt)
  if (after.some((probe) => probe.status !== 503)) {
    tally.violations.push(`round ${round}: readiness after it turned false: ${after.map((probe) => probe.status ?? probe.failure).join(', ')}`)
  }
  if (probes.some((probe) => probe.endedAt < signalAt && probe.status !== 200)) tally.violations.push(`round ${round}: not ready before the signal`)
  tally.lost = await countMissing(options.storeUrl, outcomes.flatMap((outcome) => outcome.petId ?? []))
  return tally
}

async function countMissing (storeUrl: string, ids: string[]): Promise<number> {
  const store = await openStore(storeUrl)
  try {
    let missing = 0
    for (const id of ids) if (!await store.getPet(BigInt(id))) missing++
    return missing
  } finally {
    await store.close()
  }
}
