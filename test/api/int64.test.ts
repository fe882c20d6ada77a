import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

/**
 * int64 means the whole signed 64-bit range, exactly: JSON.parse alone would turn
 * 9223372036854775807 into 9223372036854775808, and a double cannot hold most of the range.
 */

const INT64_EXACT = ['9223372036854775807', '-9223372036854775808', '9007199254740993', '-9007199254740993', '0', '-1']

const NOT_INT64 = 'must be a signed 64-bit integer written without a fraction or exponent'
const OUT_OF_INT64 = 'must be a signed 64-bit integer (-9223372036854775808 to 9223372036854775807)'
/** The message and details of the 400 invalid_request for a categoryId. */
const badCategoryId = (message: string) => ({
  message: `Invalid request: body.categoryId ${message}.`,
  details: [{ field: 'body.categoryId', message }]
})
const BAD_PET_ID = 'Invalid request: path.petId must be an integer (int64).'
const BAD_PET_ID_DETAILS = [{ field: 'path.petId', message: 'must be an integer (int64)' }]

describe('int64 categoryId', () => {
  test('comes back as the same text from createPet, getPet and listPets over the whole range', async (t) => {
    const api = await buildTestApp(t)
    for (const literal of INT64_EXACT) {
      await t.test(literal, async () => {
        const created = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":"Big","categoryId":${literal}}` })
        assert.equal(created.statusCode, 201, created.body)
        const { id } = created.json()
        const expected = `{"id":${id},"name":"Big","categoryId":${literal}}`
        assert.equal(created.body, expected)
        assert.equal((await api.inject({ url: `/v1/pets/${id}`, headers: api.auth })).body, expected)
        const listed = await api.inject({ url: '/v1/pets?limit=100', headers: api.auth })
        assert.ok(listed.body.includes(expected), `${expected} in ${listed.body}`)
      })
    }
  })

  const rejected: Array<[literal: string, error: ReturnType<typeof badCategoryId>]> = [
    ['9223372036854775808', badCategoryId(OUT_OF_INT64)],
    ['-9223372036854775809', badCategoryId(OUT_OF_INT64)],
    ['18446744073709551616', badCategoryId(OUT_OF_INT64)],
    ['123456789012345678901234567890', badCategoryId(OUT_OF_INT64)],
    ['1e400', badCategoryId('must match format "int64"')],
    ['1.5', badCategoryId('must be integer')],
    ['1.0', badCategoryId(NOT_INT64)],
    ['1e3', badCategoryId(NOT_INT64)],
    ['1E3', badCategoryId(NOT_INT64)],
    ['"1"', badCategoryId('must be integer')],
    ['"9223372036854775807"', badCategoryId('must be integer')]
  ]
  test('outside int64, fractions, exponents and numeric strings are 400 and store nothing', async (t) => {
    const api = await buildTestApp(t)
    for (const [literal, { message, details }] of rejected) {
      await t.test(literal, async () => {
        const before = await api.store.countPets()
        const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: `{"name":"Big","categoryId":${literal}}` })
        assertError(res, 400, 'invalid_request', message, { details })
        assert.equal(await api.store.countPets(), before)
      })
    }
  })
})

describe('int64 petId', () => {
  test('the ends of the range are read exactly: 404 naming that very id', async (t) => {
    const api = await buildTestApp(t)
    for (const literal of ['9223372036854775807', '-9223372036854775808']) {
      await t.test(literal, async () => {
        const res = await api.inject({ url: `/v1/pets/${literal}`, headers: api.auth })
        assertError(res, 404, 'not_found', `No pet has id ${literal}.`)
      })
    }
  })

  test('anything but an int64 literal is 400 invalid_request', async (t) => {
    const api = await buildTestApp(t)
    for (const text of ['9223372036854775808', '-9223372036854775809', '99999999999999999999', '1.5', '1e3', '01', '+1', '0x1', '%201', 'one']) {
      await t.test(JSON.stringify(text), async () => {
        const res = await api.inject({ url: `/v1/pets/${text}`, headers: api.auth })
        assertError(res, 400, 'invalid_request', BAD_PET_ID, { details: BAD_PET_ID_DETAILS })
      })
    }
  })
})
