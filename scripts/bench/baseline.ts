import Fastify from 'fastify'
import { decodeCursor } from '../../src/int64.ts'
import { createValidatorCompiler } from '../../src/validation.ts'
import { ListPetsQuerySchema, PetIdParamsSchema, sharedSchemas, type ListPetsQuery, type NewPet, type Pet, type PetIdParams } from '../../src/schemas.ts'
import { parseJsonBody } from '../../src/json-body.ts'
import { seedPet } from './seed.ts'

/**
 * The yardstick: a bare Fastify route with the service's own schemas, serving the same pets
 * from memory. No auth, no store, no logs, no rate limits: what the framework alone costs.
 */
const count = Number(process.env.BENCH_PETS ?? 10_000)
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

app.get<{ Querystring: ListPetsQuery }>('/v1/pets', {
  schema: { querystring: ListPetsQuerySchema, response: { 200: { $ref: 'Pets' } } }
}, async (request, reply) => {
  if (request.headers.authorization === undefined) {
    return reply.code(401).header('www-authenticate', 'Bearer realm="petstore"').send({ code: 'unauthorized', message: 'A valid API key is required.', status: 401 })
  }
  const { limit, status, cursor } = request.query
  const page: Pet[] = []
  for (let i = cursor ? firstIndexAfter(decodeCursor(cursor)!) : 0; i < pets.length && page.length < limit; i++) {
    if (status === undefined || pets[i]!.status === status) page.push(pets[i]!)
  }
  return page
})

app.get<{ Params: PetIdParams }>('/v1/pets/:petId', {
  schema: { params: PetIdParamsSchema, response: { 200: { $ref: 'Pet' } } }
}, async (request) => pets[Number(request.params.petId) - 1])

app.post<{ Body: NewPet }>('/v1/pets', {
  schema: { body: { $ref: 'NewPet' }, response: { 201: { $ref: 'Pet' } } }
}, async (request, reply) => {
  const pet = { id: BigInt(pets.length + 1), ...request.body }
  pets.push(pet)
  return reply.code(201).send(pet)
})

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
