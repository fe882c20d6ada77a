import { createHash } from 'node:crypto'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { decodeCursor } from '../../src/contract/int64.ts'
import type { Static } from 'typebox'
import { ListPetsQuerySchema, PetIdParamsSchema, sharedSchemas, type PetStatus } from '../../src/contract/schemas.ts'
import { seededPet } from '../../test/helpers/bulk-seed.ts'
import { headersByStatus, type ResponseHeaders } from './response-headers.ts'

/**
 * The yardstick: a bare Fastify route with the contract's schemas, serving the same pets from
 * memory. No auth, no store, no logs, no rate limits: what the framework alone costs. Bodies
 * are parsed and requests validated by Fastify's own parser and validator, not the service's,
 * so that the yardstick stays put while the service's plumbing changes; it reads the same
 * cursors as the service, which the load generator makes with the service's encodeCursor.
 * With BENCH_RESPONSE_HEADERS (JSON, from response-headers.ts) it also sends the headers the
 * service sends on each kind of response, set as the service sets them (reply.headers in an
 * onSend hook): what the framework costs with the service's headers. A conditional read (one
 * with If-None-Match) it tags as the service does (a strong ETag of the body's bytes), and
 * answers with 304 and no body when the tag is the one sent: what revalidating costs the
 * framework. Other reads carry no tag, so the yardstick of the other scenarios stays put; the
 * revalidate scenarios learn their tags conditionally (revalidate.ts).
 */
const count = Number(process.env.BENCH_PETS ?? 10_000)
const responseHeaders: ResponseHeaders = JSON.parse(process.env.BENCH_RESPONSE_HEADERS ?? '{}')

/** A body as Fastify's validator passes it on: JSON numbers stay numbers (exact for the benchmark's small ids). */
interface Body { name: string, categoryId: number, status?: PetStatus }
/** Seeded pets have bigint int64 fields as the service's do; a created one keeps the number it was sent. */
type HeldPet = Omit<Body, 'categoryId'> & { id: bigint, categoryId: bigint | number }

const pets: HeldPet[] = []
for (let i = 1; i <= count; i++) pets.push({ id: BigInt(i), ...seededPet(i) })

function firstIndexAfter (afterId: bigint): number {
  let low = 0
  let high = pets.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (pets[mid]!.id <= afterId) low = mid + 1
    else high = mid
  }
  return low
}

const app = Fastify({ logger: false })
for (const schema of sharedSchemas) app.addSchema(schema)

/** Route options: an onSend hook that adds the service's headers, when there are any for the route. */
function serviceHeaders (methodAndRoute: string) {
  const byStatus = headersByStatus(responseHeaders, methodAndRoute)
  if (byStatus.size === 0) return {}
  return {
    onSend: (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const headers = byStatus.get(reply.statusCode)
      if (headers) reply.headers(headers)
      done(null, payload)
    }
  }
}

// A tag of the body as sent; the benchmark sends back exactly the tag it got, so one tag is
// compared, not a list of them.
app.addHook('onSend', (request, reply, payload, done) => {
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch === undefined || request.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string') return done(null, payload)
  const tag = `"${createHash('sha256').update(payload).digest('base64url').slice(0, 22)}"`
  reply.header('etag', tag)
  if (ifNoneMatch !== tag) return done(null, payload)
  reply.code(304)
  done(null, '')
})

app.get<{ Querystring: Static<typeof ListPetsQuerySchema> }>('/v1/pets', {
  ...serviceHeaders('GET /v1/pets'),
  schema: { querystring: ListPetsQuerySchema, response: { 200: { $ref: 'Pets' } } }
}, async (request, reply) => {
  if (request.headers.authorization === undefined) {
    return reply.code(401).header('www-authenticate', 'Bearer realm="petstore"').send({ code: 'unauthorized', message: 'A valid API key is required.', status: 401 })
  }
  // Fastify's validator applies the schema's default limit.
  const { limit = 20, status, cursor } = request.query
  const page: HeldPet[] = []
  for (let i = cursor ? firstIndexAfter(decodeCursor(cursor)!) : 0; i < pets.length && page.length < limit; i++) {
    if (status === undefined || pets[i]!.status === status) page.push(pets[i]!)
  }
  return page
})

app.get<{ Params: { petId: number } }>('/v1/pets/:petId', {
  ...serviceHeaders('GET /v1/pets/:petId'),
  schema: { params: PetIdParamsSchema, response: { 200: { $ref: 'Pet' } } }
}, async (request) => pets[Number(request.params.petId) - 1])

app.post<{ Body: Body }>('/v1/pets', {
  ...serviceHeaders('POST /v1/pets'),
  schema: { body: { $ref: 'NewPet' }, response: { 201: { $ref: 'Pet' } } }
}, async (request, reply) => {
  const pet = { id: BigInt(pets.length + 1), ...request.body }
  pets.push(pet)
  return reply.code(201).send(pet)
})

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
