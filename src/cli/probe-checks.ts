import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { encodeCursor } from '../contract/int64.ts'
import { INT64_MAX, PET_STATUSES, type NewPet, type Pet } from '../contract/schemas.ts'

/**
 * The checks of `petstore probe`: the three operations and the two refusals every deployment
 * must give, through whatever stands in front of the instances (load balancer, proxy, CDN).
 * Plain fetch: the CLI runs without a build step, so not the generated client.
 */

/**
 * One check: its name, whether the reply was the expected one, how long it took, and what was
 * seen. skipped: it did not run, as the check it needs failed or had nothing to give it (ok is
 * false: a check that did not run has not passed); detail says why.
 */
export interface ProbeCheck { name: string, ok: boolean, skipped?: true, ms: number, detail: string }

const skip = (name: string, why: string): ProbeCheck => ({ name, ok: false, skipped: true, ms: 0, detail: why })

/** Where to probe: the base address including /v1, the key, and how long one reply may take. */
export interface ProbeTarget { baseUrl: string, key: string, timeoutMs: number }

// 2^53 + 1 has no double: a hop that reads JSON numbers into doubles would change it.
const PROBE_CATEGORY = 2n ** 53n + 1n
// A probe pet is sold, so that listings of what is on offer never show it.
const PROBE_STATUS = 'sold'
const SNIPPET_CHARS = 200

/** The reply was not the expected one; the message says what came instead. */
class Unexpected extends Error {}

interface Reply { status: number, headers: Headers, body: unknown, text: string }

export async function runChecks (target: ProbeTarget): Promise<ProbeCheck[]> {
  const pet: NewPet = { name: `petstore probe ${new Date().toISOString()}`, categoryId: PROBE_CATEGORY, status: PROBE_STATUS }
  const body = `{"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId},"status":"${PROBE_STATUS}"}`
  const idempotencyKey = `probe-${randomUUID()}`
  const create = () => call(target, 'POST', '/pets', { key: target.key, body, idempotencyKey })
  let created: Pet | undefined
  const checks = [await check('createPet', async () => {
    created = expectPet(await create(), 201, pet)
    return `201, id ${created.id}`
  })]
  // The rest of the pet checks need the pet; without it they are skipped.
  const withPet = (name: string, run: (created: Pet) => Promise<string>) =>
    created ? check(name, () => run(created!)) : Promise.resolve(skip(name, 'createPet failed'))
  checks.push(await withPet('createPet replay', async (created) => {
    const reply = await create()
    expectPet(reply, 201, created)
    if (reply.headers.get('idempotent-replayed') !== 'true') throw new Unexpected('the repeat made a new reply: no Idempotent-Replayed: true')
    return '201, the same pet, Idempotent-Replayed: true'
  }))
  checks.push(await withPet('listPets', async (created) => {
    // Keyset pagination: the page after id - 1 starts with the new pet, however many pets there are.
    const reply = await call(target, 'GET', `/pets?status=${PROBE_STATUS}&limit=1&cursor=${encodeCursor(created.id - 1n)}`, { key: target.key })
    if (reply.status !== 200) throw unexpected(reply, '200')
    if (!Array.isArray(reply.body) || !isDeepStrictEqual(reply.body[0], created)) throw new Unexpected(`the new pet is not listed: got ${snippet(reply.text)}`)
    return `200, the new pet listed with status=${PROBE_STATUS}`
  }))
  checks.push(await withPet('getPet', async (created) => {
    const reply = await call(target, 'GET', `/pets/${created.id}`, { key: target.key })
    expectPet(reply, 200, created)
    const sunset = reply.headers.get('sunset')
    if (!reply.headers.get('deprecation') || !sunset) throw new Unexpected('200 without the Deprecation and Sunset fields of a deprecated operation')
    return `200, deprecated, Sunset: ${sunset}`
  }))
  checks.push(...await refusalChecks(target))
  return checks
}

/**
 * The checks of `probe --read-only`: a listing, a get of the first pet listed, and the two
 * refusals. Nothing is written, so it can run every minute, with a read key.
 */
export async function runReadOnlyChecks (target: ProbeTarget): Promise<ProbeCheck[]> {
  let first: Pet | undefined
  const listed = await check('listPets', async () => {
    const reply = await call(target, 'GET', '/pets?limit=1', { key: target.key })
    if (reply.status !== 200) throw unexpected(reply, '200')
    if (!Array.isArray(reply.body) || reply.body.length > 1 || !reply.body.every(isPet)) throw new Unexpected(`200 without a list of at most 1 pet: ${snippet(reply.text)}`)
    first = reply.body[0] as Pet | undefined
    return first ? `200, first pet id ${first.id}` : '200, no pets yet'
  })
  const checks = [listed]
  // An empty store has no pet to get (the not found check below still reads getPet).
  const getFirst = (pet: Pet) => check('getPet', async () => {
    const reply = await call(target, 'GET', `/pets/${pet.id}`, { key: target.key })
    expectPet(reply, 200, pet)
    const sunset = reply.headers.get('sunset')
    if (!reply.headers.get('deprecation') || !sunset) throw new Unexpected('200 without the Deprecation and Sunset fields of a deprecated operation')
    return `200, the listed pet, deprecated, Sunset: ${sunset}`
  })
  checks.push(!listed.ok ? skip('getPet', 'listPets failed') : first ? await getFirst(first) : skip('getPet', 'the listing is empty'))
  checks.push(...await refusalChecks(target))
  return checks
}

/** A 401 without a key and a 404 for an id never assigned, each with the Error body. */
async function refusalChecks (target: ProbeTarget): Promise<ProbeCheck[]> {
  const checks = [await check('unauthorized', async () => {
    const reply = await call(target, 'GET', '/pets', {})
    expectError(reply, 401, 'unauthorized')
    if (!/^Bearer\b/i.test(reply.headers.get('www-authenticate') ?? '')) throw new Unexpected('401 without WWW-Authenticate: Bearer')
    return '401 unauthorized without a key, with the Error body'
  })]
  checks.push(await check('not found', async () => {
    expectError(await call(target, 'GET', `/pets/${INT64_MAX}`, { key: target.key }), 404, 'not_found')
    return '404 not_found for an id never assigned, with the Error body'
  }))
  return checks
}

async function check (name: string, run: () => Promise<string>): Promise<ProbeCheck> {
  const started = performance.now()
  try {
    const detail = await run()
    return { name, ok: true, ms: elapsed(started), detail }
  } catch (error) {
    if (!(error instanceof Unexpected)) throw error
    return { name, ok: false, ms: elapsed(started), detail: error.message }
  }
}

const elapsed = (started: number) => Math.round(performance.now() - started)

async function call (target: ProbeTarget, method: string, path: string, options: { key?: string, body?: string, idempotencyKey?: string }): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (options.key) headers.authorization = `Bearer ${options.key}`
  if (options.body) headers['content-type'] = 'application/json'
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey
  try {
    const res = await fetch(target.baseUrl + path, { method, headers, body: options.body, redirect: 'manual', signal: AbortSignal.timeout(target.timeoutMs) })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: parseExact(text), text }
  } catch (error) {
    throw new Unexpected(`${method} ${target.baseUrl}${path}: ${unreachable(error, target.timeoutMs)}`)
  }
}

function unreachable (error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return `no reply within ${timeoutMs} ms`
  const cause = error instanceof Error ? error.cause : undefined
  const code = cause instanceof Error ? (cause as NodeJS.ErrnoException).code ?? cause.message : undefined
  return `cannot connect (${code ?? (error instanceof Error ? error.message : String(error))})`
}

type Reviver = (this: unknown, key: string, value: unknown) => unknown
// Integers are read from their source text as bigints: int64 ids and categoryIds stay exact.
const exactIntegers = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && context?.source !== undefined && /^-?\d+$/.test(context.source) ? BigInt(context.source) : value

function parseExact (text: string): unknown {
  try {
    return JSON.parse(text, exactIntegers as Reviver)
  } catch {
    return undefined
  }
}

/** A pet as the interface gives it: an id, a name, a categoryId, and a status when it has one. */
function isPet (value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const { id, name, categoryId, status, ...rest } = value as Record<string, unknown>
  return typeof id === 'bigint' && id > 0n && typeof name === 'string' && typeof categoryId === 'bigint' &&
    (status === undefined || (PET_STATUSES as readonly unknown[]).includes(status)) && Object.keys(rest).length === 0
}

function expectPet (reply: Reply, status: number, expected: NewPet | Pet): Pet {
  if (reply.status !== status) throw unexpected(reply, String(status))
  const pet = reply.body as Pet
  const id = typeof pet === 'object' && pet !== null ? pet.id : undefined
  if (typeof id !== 'bigint' || id < 1n || !isDeepStrictEqual(pet, { id, ...expected })) {
    throw new Unexpected(`${status} with a body that is not the pet sent: ${snippet(reply.text)}`)
  }
  const location = reply.headers.get('location')
  if (status === 201 && !location?.endsWith(`/pets/${id}`)) throw new Unexpected(`201 with Location ${JSON.stringify(location)}, not …/pets/${id}`)
  return pet
}

function expectError (reply: Reply, status: number, code: string): void {
  if (reply.status !== status) throw unexpected(reply, `${status} ${code}`)
  const body = reply.body as { code?: unknown, message?: unknown, status?: unknown } | undefined
  if (body?.code !== code || typeof body.message !== 'string' || body.status !== BigInt(status)) {
    throw new Unexpected(`${status} without the Error body {code: "${code}", message, status: ${status}}: ${snippet(reply.text)}`)
  }
}

/** What came instead: the status, the Error body's code and message or the start of the body, and the request id. */
function unexpected (reply: Reply, expected: string): Unexpected {
  const error = reply.body as { code?: unknown, message?: unknown } | undefined
  const what = typeof error?.code === 'string' && typeof error.message === 'string' ? `${error.code}: ${error.message}` : snippet(reply.text)
  const requestId = reply.headers.get('x-request-id')
  return new Unexpected(`expected ${expected}, got ${reply.status} ${what}${requestId ? ` (request id ${requestId})` : ''}`)
}

const snippet = (text: string) => JSON.stringify(text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text)
