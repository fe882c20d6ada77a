import { Agent } from 'node:http'
import { parseExact, plannedCreate, postCreate, samePet, errorCode, type ExactPet } from './load.ts'
import { send, type HttpAnswer } from './server-process.ts'

/**
 * Steady load through the balancer, as clients that never retry: workers send listings, getPet
 * of pets created before, and creates with an Idempotency-Key, each request once. Anything but
 * the expected answer is a failure: a connection error, a 5xx, any other status, a wrong pet.
 */

export interface Sample { startedAt: number, ms: number }

export interface LoadRun {
  /** Stops the workers and resolves once each has finished its request in flight. */
  stop(): Promise<void>
  samples: Sample[]
  failures: string[]
  /** Every pet acknowledged with 201, by id, as the answer gave it. */
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
    const expect = (what: string, answer: HttpAnswer, status: number) => {
      if (answer.status === status) return true
      run.failures.push(`${what}: ${answer.status} ${answer.body.slice(0, 200)}`)
      return false
    }
    try {
      if (kind < 3 || ids.length === 0) {
        const create = plannedCreate(`stack-${w}`)
        const answer = await postCreate(agent, port, key, create)
        sample()
        if (!expect('create', answer, 201)) return
        const pet = parseExact(answer.body)
        if (!samePet({ ...create.expected, id: pet.id! }, pet)) run.failures.push(`create answered another pet: ${answer.body}`)
        run.acknowledged.set(pet.id!, pet)
        ids.push(pet.id!)
      } else if (kind < 6) {
        const id = ids[Math.floor(Math.random() * ids.length)]!
        const answer = await send(agent, port, 'GET', `/v1/pets/${id}`, { authorization: `Bearer ${key}` })
        sample()
        if (expect(`getPet ${id}`, answer, 200) && !samePet(parseExact(answer.body), run.acknowledged.get(id)!)) {
          run.failures.push(`getPet ${id} answered another pet: ${answer.body}`)
        }
      } else {
        const path = LIST_PATHS[n % LIST_PATHS.length]!
        const answer = await send(agent, port, 'GET', path, { authorization: `Bearer ${key}` })
        sample()
        expect(`listPets ${path}`, answer, 200)
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
