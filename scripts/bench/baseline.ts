import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import type { Static } from 'typebox'
import { decodeCursor } from '../../src/contract/int64.ts'
import { createValidatorCompiler } from '../../src/http/validation.ts'
import { LIST_LIMIT_DEFAULT, ListPetsQuerySchema, PetIdParamsSchema, sharedSchemas, type NewPet, type Pet } from '../../src/contract/schemas.ts'
import { parseJsonBody } from '../../src/http/json-body.ts'
import { headersByStatus, type AnswerHeaders } from './answer-headers.ts'
import { seedPet } from './seed.ts'

/**
 * The yardstick: a bare Fastify route with the service's own schemas, serving the same pets
 * from memory. No auth, no store, no logs, no rate limits: what the framework alone costs.
 * With BENCH_ANSWER_HEADERS (JSON, from answer-headers.ts) it also sends the headers the
 * service sends on each kind of answer, set as the service sets them (reply.headers in an
 * onSend hook): what the framework costs with the service's headers.
 */
const count = Number(process.env.BENCH_PETS ?? 10_000)
const answerHeaders: AnswerHeaders = JSON.parse(process.env.BENCH_ANSWER_HEADERS ?? '{}')
const pets: Pet[] = []
for (let i = 1; i <= count; i++) pets.push({ id: BigInt(i), ...seedPet(i) })

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
app.setValidatorCompiler(createValidatorCompiler())
for (const schema of sharedSchemas) app.addSchema(schema)
app.removeAllContentTypeParsers()
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, parseJsonBody(body as string)))

/** Route options: an onSend hook that adds the service's headers, when there are any for the route. */
function serviceHeaders (methodAndRoute: string) {
  const byStatus = headersByStatus(answerHeaders, methodAndRoute)
  if (byStatus.size === 0) return {}
  return {
    onSend: (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const headers = byStatus.get(reply.statusCode)
      if (headers) reply.headers(headers)
      done(null, payload)
    }
  }
}

app.get<{ Querystring: Static<typeof ListPetsQuerySchema> }>('/v1/pets', {
  ...serviceHeaders('GET /v1/pets'),
  schema: { querystring: ListPetsQuerySchema, response: { 200: { $ref: 'Pets' } } }
}, async (request, reply) => {
  if (request.headers.authorization === undefined) {
    return reply.code(401).header('www-authenticate', 'Bearer realm="petstore"').send({ code: 'unauthorized', message: 'A valid API key is required.', status: 401 })
  }
  const { limit = LIST_LIMIT_DEFAULT, status, cursor } = request.query
  const page: Pet[] = []
  for (let i = cursor ? firstIndexAfter(decodeCursor(cursor)!) : 0; i < pets.length && page.length < limit; i++) {
    if (status === undefined || pets[i]!.status === status) page.push(pets[i]!)
  }
  return page
})

app.get<{ Params: Static<typeof PetIdParamsSchema> }>('/v1/pets/:petId', {
  ...serviceHeaders('GET /v1/pets/:petId'),
  schema: { params: PetIdParamsSchema, response: { 200: { $ref: 'Pet' } } }
}, async (request) => pets[Number(request.params.petId) - 1])

app.post<{ Body: NewPet }>('/v1/pets', {
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
