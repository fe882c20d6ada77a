import { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { addTally, emptyTally, errorCode, listAll, plannedCreate, postCreate, randomBetween, samePet, type ExactPet, type FaultTally, type PlannedCreate } from './load.ts'
import { startServer, type ServerProcess } from './server-process.ts'

/**
 * Crash durability. Per round: a server process under a write load of concurrent creates is
 * killed with SIGKILL at a random moment and started again on the same store. Then:
 * - every pet ever acknowledged with 201 (this round and all before) is there, exactly;
 * - every create whose response never came is sent again with its Idempotency-Key, and every
 *   create ends up as exactly one pet: none lost, none doubled.
 */

export interface CrashOptions {
  storeUrl: string
  key: string
  rounds: number
  /** Concurrent clients in the load; 8 unless given. */
  workers?: number
  /** One line per round, for the long run. */
  progress?: (line: string) => void
}

interface Sent { create: PlannedCreate, id?: string, status?: number, failure?: string }

// Load shedding is off: on a busy test machine it would refuse the load with 503 by design,
// which is not what these rounds are about.
const serverEnv = (storeUrl: string) => ({ DATABASE_URL: storeUrl, RATE_LIMIT_PER_MINUTE: '0', SHUTDOWN_DRAIN_MS: '0', MAX_EVENT_LOOP_DELAY_MS: '0' })

export async function crashRounds (options: CrashOptions): Promise<FaultTally> {
  const acknowledged = new Map<string, ExactPet>()
  let tally = emptyTally()
  for (let round = 1; round <= options.rounds; round++) {
    const result = await crashRound(options, round, acknowledged)
    tally = addTally(tally, result)
    options.progress?.(`crash round ${round}/${options.rounds}: ${result.requests} sent, ${result.acknowledged} acknowledged, lost ${result.lost}, 5xx ${result.serverErrors}, violations ${result.violations.length}`)
  }
  return tally
}

async function crashRound (options: CrashOptions, round: number, acknowledged: Map<string, ExactPet>): Promise<FaultTally> {
  const tally: FaultTally = { ...emptyTally(), runs: 1 }
  const sent: Sent[] = []
  const server = await startServer(serverEnv(options.storeUrl))
  const agent = new Agent({ keepAlive: true, maxSockets: options.workers ?? 8 })
  try {
    let firstAck: () => void = () => {}
    const loaded = new Promise<void>((resolve) => { firstAck = resolve })
    const worker = async (w: number) => {
      for (let n = 0; ; n++) {
        const entry: Sent = { create: plannedCreate(`crash-r${round}-w${w}-${n}`) }
        sent.push(entry)
        try {
          const response = await postCreate(agent, server.port, options.key, entry.create)
          entry.status = response.status
          if (response.status === 201) {
            entry.id = JSON.parse(response.body).id.toString()
            acknowledged.set(entry.id!, { id: entry.id!, ...entry.create.expected })
            firstAck()
          }
        } catch (error) {
          entry.failure = errorCode(error)
          return
        }
      }
    }
    const workers = Array.from({ length: options.workers ?? 8 }, (_, w) => worker(w))
    await loaded
    await sleep(randomBetween(50, 500))
    server.child.kill('SIGKILL')
    await Promise.all(workers)
    await server.exited
  } finally {
    agent.destroy()
    await server.stop('SIGKILL')
  }

  tally.requests = sent.length
  for (const entry of sent) {
    if (entry.status === 201) tally.acknowledged++
    else if (entry.status !== undefined && entry.status >= 500) tally.serverErrors++
    else if (entry.status !== undefined) tally.violations.push(`round ${round}: a create got ${entry.status}`)
  }
  const restarted = await startServer(serverEnv(options.storeUrl))
  const verifier = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    await checkAcknowledged(restarted, verifier, options.key, acknowledged, round, tally)
    await retryWithoutResponse(restarted, verifier, options.key, sent, acknowledged, round, tally)
  } finally {
    verifier.destroy()
    const exit = await restarted.stop('SIGTERM')
    if (exit.code !== 0) tally.violations.push(`round ${round}: the restarted server exited with ${exit.code ?? exit.signal} on SIGTERM`)
  }
  return tally
}

async function checkAcknowledged (server: ServerProcess, agent: Agent, key: string, acknowledged: Map<string, ExactPet>, round: number, tally: FaultTally) {
  const stored = await listAll(agent, server.port, key)
  for (const [id, pet] of acknowledged) {
    if (!samePet(stored.get(id), pet)) {
      tally.lost++
      tally.violations.push(`round ${round}: acknowledged pet ${id} is ${stored.has(id) ? 'changed' : 'missing'} after the restart`)
    }
  }
}

/**
 * A client that got no response retries with the same Idempotency-Key: whether or not the first
 * attempt committed, it must end as one pet. A sample of acknowledged creates is retried too:
 * they must replay the same pet.
 */
async function retryWithoutResponse (server: ServerProcess, agent: Agent, key: string, sent: Sent[], acknowledged: Map<string, ExactPet>, round: number, tally: FaultTally) {
  const retried = [...sent.filter((entry) => entry.status === undefined), ...sent.filter((entry) => entry.status === 201).slice(0, 10)]
  for (const entry of retried) {
    const response = await postCreate(agent, server.port, key, entry.create)
    if (response.status >= 500) tally.serverErrors++
    if (response.status !== 201) {
      tally.violations.push(`round ${round}: a retry got ${response.status}: ${response.body}`)
      continue
    }
    const id = JSON.parse(response.body).id.toString() as string
    if (entry.id !== undefined && (id !== entry.id || response.headers['idempotent-replayed'] !== 'true')) {
      tally.violations.push(`round ${round}: the retry of acknowledged pet ${entry.id} got pet ${id} (replayed: ${String(response.headers['idempotent-replayed'])})`)
    }
    entry.id = id
    acknowledged.set(id, { id, ...entry.create.expected })
  }
  const stored = await listAll(agent, server.port, key)
  const byName = new Map<string, number>()
  for (const pet of stored.values()) byName.set(pet.name!, (byName.get(pet.name!) ?? 0) + 1)
  for (const entry of sent) {
    const copies = byName.get(entry.create.expected.name!) ?? 0
    if (copies !== 1) tally.violations.push(`round ${round}: create ${entry.create.idempotencyKey} left ${copies} pets`)
  }
}
