import { Agent } from 'node:http'
import fc from 'fast-check'
import { encodeCursor } from '../../src/contract/int64.ts'
import { NAME_PATTERN } from '../../src/contract/schemas.ts'
import type { Store } from '../../src/store/types.ts'
import { validateResponse } from './app.ts'
import { parseExact } from './load.ts'
import { send } from './server-process.ts'

/**
 * Property-based fuzzing over real HTTP: batches of generated requests (valid and hostile
 * methods, paths, query strings, Authorization headers, Idempotency-Keys and bodies) sent in
 * parallel over keep-alive connections. For every response:
 * - no 5xx;
 * - it validates against the OpenAPI document (status documented, Error body where it errs);
 * - without a valid key, never a 2xx;
 * - a 201 carries exactly the pet that was sent.
 * For every batch: the store grew by the number of 201s, so no rejected request wrote.
 */

/** The settings of the fuzzed app. */
export const FUZZ_ENV = {
  // Raised, not switched off: the limiter runs on every request as in production.
  RATE_LIMIT_PER_MINUTE: '100000000',
  FAILED_AUTH_LIMIT_PER_MINUTE: '100000000',
  // Load shedding replies 503 by design when the machine is busy; it is not what is fuzzed here.
  MAX_EVENT_LOOP_DELAY_MS: '0'
}

export interface FuzzTarget { port: number, key: string, revokedKey: string, store: Store }

interface FuzzRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string
  /** Authorization carries a usable key (in any valid spelling). */
  authorized: boolean
  /** The pet a 201 must return, when the body is a valid NewPet. */
  expected?: Record<string, string>
}

const int64 = fc.oneof(
  fc.constantFrom('0', '-1', '9223372036854775807', '-9223372036854775808'),
  fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n).map(String)
)
const hostileNumber = fc.constantFrom('9223372036854775808', '-9223372036854775809', '1e3', '1.5', '1.0', '0x10', '00', '"7"', 'null', 'true', '[]', '{}', 'NaN')
const validNamePattern = new RegExp(NAME_PATTERN, 'u')
const validName = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }).filter((name) => [...name].length <= 200 && validNamePattern.test(name))
const anyText = fc.string({ unit: 'binary', maxLength: 300 })

const validPet = fc.record({ name: validName, categoryId: int64, status: fc.option(fc.constantFrom('available', 'pending', 'sold'), { nil: undefined }), extra: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }) })
  .map(({ name, categoryId, status, extra }) => ({
    body: `{"name":${JSON.stringify(name)},"categoryId":${categoryId}${status ? `,"status":"${status}"` : ''}${extra === undefined ? '' : `,"extra":${JSON.stringify(extra)}`}}`,
    expected: { name, categoryId, ...(status ? { status } : {}) } as Record<string, string>
  }))

const hostileBody = fc.oneof(
  fc.record({ name: fc.oneof(anyText, fc.constant('')), categoryId: hostileNumber }).map(({ name, categoryId }) => `{"name":${JSON.stringify(name)},"categoryId":${categoryId}}`),
  fc.record({ name: validName, status: fc.oneof(anyText, fc.constant('SOLD')) }).map(({ name, status }) => `{"name":${JSON.stringify(name)},"categoryId":1,"status":${JSON.stringify(status)}}`),
  fc.constantFrom(
    '{"name":"Rex","categoryId":1,"__proto__":{"polluted":true}}',
    '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"polluted":true}}}',
    '{"name":"\\ud800","categoryId":1}', '{"name":"a\\u0000b","categoryId":1}', '{"name":"   ","categoryId":1}',
    '[]', 'null', '"pet"', '', '{', '{"name":"Rex"', '{"name":"Rex","categoryId":1}x',
    `{"name":"${'a'.repeat(201)}","categoryId":1}`, `{"name":"Rex","categoryId":1,"pad":"${'x'.repeat(17_000)}"}`,
    `${'['.repeat(5000)}${']'.repeat(5000)}`
  ),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? 'null'),
  anyText
)

const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', '')

const queryValue = fc.oneof(fc.constantFrom('', '0', '1', '20', '100', '101', '-1', '1.5', '01', ' 5', 'abc', 'available', 'sold', 'SOLD', '__proto__'),
  fc.bigInt(0n, 2n ** 64n).map(String), fc.string({ unit: 'grapheme-ascii', maxLength: 30 }))
const query = fc.array(fc.tuple(fc.constantFrom('limit', 'status', 'cursor', 'other', '__proto__', 'constructor'), fc.oneof(queryValue, fc.bigInt(-5n, 2n ** 63n).map((id) => encodeCursor(id)))), { maxLength: 4 })
  .map((pairs) => pairs.length === 0 ? '' : '?' + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'))

const petId = fc.oneof(int64, hostileNumber.map(encodeURIComponent), fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map(encodeURIComponent), fc.constant('1'.repeat(150)))
const path = fc.oneof(
  { weight: 6, arbitrary: fc.constant('/v1/pets') },
  { weight: 3, arbitrary: petId.map((id) => `/v1/pets/${id}`) },
  { weight: 1, arbitrary: fc.constantFrom('/v1/pets/', '/v1//pets', '/v1/pets/1/2', '/v1/pets/%zz', '/v1/pets/..%2F..%2Fetc', '/v1/Pets', '/v2/pets', '/', '/v1', '/v1/pets%00') },
  { weight: 1, arbitrary: fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 4 }).map((segments) => '/' + segments.map(encodeURIComponent).join('/')) }
)

function authorization (key: string, revokedKey: string) {
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(`Bearer ${key}`, `bearer ${key}`, `BEARER  ${key}`).map((header) => ({ header, authorized: true })) },
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constantFrom(undefined, '', 'Bearer', 'Bearer ', `Basic ${key}`, `Bearer ${key}x`, `Bearer ${key.slice(0, -1)}`, `Bearer ${revokedKey}`, `Bearer ${key} extra`, `Token ${key}`, `${key}`),
        fc.string({ unit: 'grapheme-ascii', maxLength: 80 }).map((token) => `Bearer ${token}`)
      ).map((header) => ({ header, authorized: false }))
    }
  )
}

const idempotencyKey = fc.option(fc.oneof(fc.uuid(), fc.string({ unit: 'grapheme-ascii', maxLength: 300 }), fc.constantFrom('"quoted"', '""', 'a b', '"a\\"b"')), { nil: undefined, freq: 3 })

export function fuzzRequest (key: string, revokedKey: string): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GET', 'POST') }, { weight: 1, arbitrary: fc.constantFrom('HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') }),
    path,
    query,
    auth: authorization(key, revokedKey),
    pet: fc.oneof(validPet, hostileBody.map((body) => ({ body, expected: undefined }))),
    type: contentType,
    idempotencyKey
  }).map(({ method, path, query, auth, pet, type, idempotencyKey }) => {
    const headers: Record<string, string> = {}
    if (auth.header !== undefined) headers.authorization = auth.header
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey
    const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH'
    if (hasBody && type !== '') headers['content-type'] = type
    return { method, path: path + query, headers, authorized: auth.authorized, ...(hasBody ? { body: pet.body, expected: pet.expected } : {}) }
  })
}

/** What was wrong with one response; empty when nothing. */
function judge (request: FuzzRequest, status: number, contentType: string | undefined, body: string): string[] {
  const problems = validateResponse({ method: request.method, url: request.path, status, contentType, body })
  if (status >= 500) problems.push(`5xx: ${body}`)
  if (status < 300 && !request.authorized) problems.push(`${status} without a valid key`)
  if (status === 201) {
    const { id, ...fields } = parseExact(body)
    if (JSON.stringify(fields) !== JSON.stringify(request.expected) || id === undefined) problems.push(`201 with ${body}, sent ${request.body}`)
  }
  return problems
}

function describe (request: FuzzRequest): string {
  const body = request.body === undefined ? '' : ` body ${JSON.stringify(request.body.length > 120 ? request.body.slice(0, 120) + '…' : request.body)}`
  return `${request.method} ${request.path} ${JSON.stringify(request.headers)}${body}`
}

export interface FuzzResult { requests: number, created: number, serverErrors: number }

/** Runs batches of `batchSize` parallel requests until `requests` are sent; throws with the shrunk counterexample on failure. */
export async function fuzz (target: FuzzTarget, options: { requests: number, batchSize?: number, seed?: number }): Promise<FuzzResult> {
  const batchSize = options.batchSize ?? 50
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  const result: FuzzResult = { requests: 0, created: 0, serverErrors: 0 }
  try {
    await fc.assert(fc.asyncProperty(fc.array(fuzzRequest(target.key, target.revokedKey), { minLength: batchSize, maxLength: batchSize }), async (batch) => {
      const before = await target.store.countPets()
      const replies = await Promise.all(batch.map((request) => send(agent, target.port, request.method, request.path, request.headers, request.body)))
      const after = await target.store.countPets()
      const problems = replies.flatMap((response, i) => judge(batch[i]!, response.status, response.headers['content-type'] as string | undefined, response.body)
        .map((problem) => `${describe(batch[i]!)} → ${problem}`))
      const created = replies.filter((response) => response.status === 201 && response.headers['idempotent-replayed'] === undefined).length
      if (after - before !== created) problems.push(`the store grew by ${after - before} for ${created} new pets`)
      result.requests += batch.length
      result.created += created
      result.serverErrors += replies.filter((response) => response.status >= 500).length
      if (problems.length > 0) throw new Error(problems.slice(0, 5).join('\n'))
    }), { numRuns: Math.ceil(options.requests / batchSize), seed: options.seed, endOnFailure: false, interruptAfterTimeLimit: 600_000 })
  } finally {
    agent.destroy()
  }
  return result
}
