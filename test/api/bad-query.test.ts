import assert from 'node:assert/strict'
import { test } from 'node:test'
import { seedPets } from '../helpers/api-steps.ts'
import { buildTestApp } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

/** The listPets bad-query matrix: query strings are text and are parsed strictly. */

/** The message and details of a 400 invalid_request naming the parameter. */
const invalid = (field: string, message: string, summary = message) => ({
  message: `Invalid request: ${field} ${summary}.`,
  details: [{ field, message }]
})
const BAD_LIMIT = invalid('query.limit', 'must be an integer from 1 to 100')
const BAD_STATUS = invalid('query.status', 'must be one of available, pending, sold')
const BAD_CURSOR = invalid('query.cursor', 'is not valid')
const FOREIGN_CURSOR = invalid('query.cursor', 'is not valid', 'is not a cursor this service issued')

const BAD_QUERIES: Array<[query: string, error: ReturnType<typeof invalid>]> = [
  ['limit=0', BAD_LIMIT],
  ['limit=101', BAD_LIMIT],
  ['limit=-1', BAD_LIMIT],
  ['limit=1.5', BAD_LIMIT],
  ['limit=1e1', BAD_LIMIT],
  ['limit=01', BAD_LIMIT],
  ['limit=+5', BAD_LIMIT],
  ['limit=%205', BAD_LIMIT],
  ['limit=5x', BAD_LIMIT],
  ['limit=ten', BAD_LIMIT],
  ['limit=', BAD_LIMIT],
  ['limit=99999999999999999999999', BAD_LIMIT],
  ['limit=1&limit=2', invalid('query.limit', 'must be given once')],
  ['status=lost', BAD_STATUS],
  ['status=Available', BAD_STATUS],
  ['status=', BAD_STATUS],
  ['status=available&status=sold', invalid('query.status', 'must be given once')],
  ['cursor=', invalid('query.cursor', 'must not be empty')],
  ['cursor=!!', BAD_CURSOR],
  ['cursor=YWZ0ZXI6MQ==', BAD_CURSOR],
  [`cursor=${'A'.repeat(65)}`, BAD_CURSOR],
  ['cursor=abc', FOREIGN_CURSOR],
  [`cursor=${Buffer.from('after:01').toString('base64url')}`, FOREIGN_CURSOR],
  [`cursor=${Buffer.from('after:9223372036854775808').toString('base64url')}`, FOREIGN_CURSOR],
  [`cursor=${Buffer.from('before:1').toString('base64url')}`, FOREIGN_CURSOR]
]

test('listPets replies to each bad query with 400 invalid_request naming the parameter', async (t) => {
  const api = await buildTestApp(t)
  await seedPets(api.store, ['available', 'sold'])
  for (const [query, { message, details }] of BAD_QUERIES) {
    await t.test(query, async () => {
      const res = await api.inject({ url: `/v1/pets?${query}`, headers: api.auth })
      assertError(res, 400, 'invalid_request', message, { details })
    })
  }
})

test('listPets ignores query parameters it does not know', async (t) => {
  const api = await buildTestApp(t)
  const pets = await seedPets(api.store, ['available', 'sold'])
  const res = await api.inject({ url: '/v1/pets?offset=1&page=2&sort=name', headers: api.auth })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(res.json(), pets)
})
