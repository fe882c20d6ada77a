import { randomBytes, randomUUID } from 'node:crypto'
import type { Agent } from 'node:http'
import { send, type HttpResponse } from './server-process.ts'

/**
 * The write load of the fault tests: creates with an Idempotency-Key each, bodies that test
 * exactness (int64 categoryIds, names beyond ASCII), and a tally everyone reports the same way.
 */

export interface FaultTally {
  runs: number
  /** Requests sent under load. */
  requests: number
  /** Creates that got 201. */
  acknowledged: number
  /** Acknowledged pets missing afterwards, or not exactly as acknowledged. */
  lost: number
  /** Responses with a 5xx status. */
  serverErrors: number
  /** Everything else that must not happen, described. */
  violations: string[]
}

export const emptyTally = (): FaultTally => ({ runs: 0, requests: 0, acknowledged: 0, lost: 0, serverErrors: 0, violations: [] })

export function addTally (total: FaultTally, round: FaultTally): FaultTally {
  return {
    runs: total.runs + round.runs,
    requests: total.requests + round.requests,
    acknowledged: total.acknowledged + round.acknowledged,
    lost: total.lost + round.lost,
    serverErrors: total.serverErrors + round.serverErrors,
    violations: [...total.violations, ...round.violations]
  }
}

/** A pet as text fields: numbers keep their exact source (no double in between). */
export type ExactPet = Record<string, string>

type Reviver = (this: unknown, key: string, value: unknown) => unknown
const keepNumberSource = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' ? context?.source : value

export function parseExact<T = ExactPet> (text: string): T {
  return JSON.parse(text, keepNumberSource as Reviver) as T
}

const NAME_SPICE = ['', 'é', '猫', '🐈', ' ', 'ß']
const STATUSES = [undefined, 'available', 'pending', 'sold'] as const

export interface PlannedCreate {
  idempotencyKey: string
  body: string
  /** What the pet must look like, id aside. */
  expected: ExactPet
}

/** A unique pet: the name carries a random token, so every create can be found by name. */
export function plannedCreate (label: string): PlannedCreate {
  const spice = NAME_SPICE[randomBytes(1)[0]! % NAME_SPICE.length]!
  const name = `${label}-${randomUUID().slice(0, 8)}${spice}x`
  const categoryId = randomBytes(8).readBigInt64BE().toString()
  const status = STATUSES[randomBytes(1)[0]! % STATUSES.length]
  const expected: ExactPet = { name, categoryId, ...(status ? { status } : {}) }
  const body = `{"name":${JSON.stringify(name)},"categoryId":${categoryId}${status ? `,"status":"${status}"` : ''}}`
  return { idempotencyKey: randomUUID(), body, expected }
}

export function postCreate (agent: Agent, port: number, key: string, create: PlannedCreate): Promise<HttpResponse> {
  return send(agent, port, 'POST', '/v1/pets', {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    'idempotency-key': create.idempotencyKey
  }, create.body)
}

/** Every pet in the store, following rel="next" from the first page. */
export async function listAll (agent: Agent, port: number, key: string): Promise<Map<string, ExactPet>> {
  const pets = new Map<string, ExactPet>()
  let path: string | undefined = '/v1/pets?limit=100'
  while (path) {
    const response = await send(agent, port, 'GET', path, { authorization: `Bearer ${key}` })
    if (response.status !== 200) throw new Error(`listing ${path} got ${response.status}: ${response.body}`)
    for (const pet of parseExact<ExactPet[]>(response.body)) pets.set(pet.id!, pet)
    const next = /<[^>]*?(\/pets\?[^>]+)>; rel="next"/.exec(String(response.headers.link ?? ''))?.[1]
    path = next ? `/v1${next}` : undefined
  }
  return pets
}

/** The pet as acknowledged, compared field by field with the text of the response. */
export function samePet (stored: ExactPet | undefined, acknowledged: ExactPet): boolean {
  return stored !== undefined && JSON.stringify(Object.entries(stored).sort()) === JSON.stringify(Object.entries(acknowledged).sort())
}

export const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message

export function randomBetween (min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min))
}
