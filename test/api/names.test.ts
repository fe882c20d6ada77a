import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

/**
 * Names are stored byte for byte: no trimming, no Unicode normalization, no re-encoding.
 * Each name is checked in the raw UTF-8 of the responses, not only after parsing.
 */

const NAMES: Array<[what: string, name: string]> = [
  ['emoji', '🐶 Rex 🐕‍🦺'],
  ['an emoji ZWJ sequence and a flag', '👩‍👩‍👧‍👦🇯🇵'],
  ['combining marks, decomposed (not normalized to NFC)', 'Zoe\u0301 n\u0303'],
  ['the same letters precomposed', 'Zoé ñ'],
  ['stacked combining marks', 'a\u0300\u0301\u0302\u0303'],
  ['Hebrew, right to left', 'כלב'],
  ['Arabic with a right-to-left mark', 'قطة\u200f'],
  ['mixed directions', 'Rex ركس 42'],
  ['CJK', '小白'],
  ['astral letters', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'],
  ['leading and trailing spaces kept', '  Rex  '],
  ['JSON-escaped characters', 'Rex "the \\ dog" / <b>&amp;'],
  ['200 code points of emoji (400 UTF-16 units)', '🐶'.repeat(200)],
  ['200 code points of combining marks', 'e\u0301'.repeat(100)],
  ['200 ASCII characters', 'x'.repeat(200)]
]

test('a name comes back byte for byte from createPet, getPet and listPets', async (t) => {
  const api = await buildTestApp(t)
  for (const [what, name] of NAMES) {
    await t.test(what, async () => {
      const encoded = Buffer.from(JSON.stringify(name), 'utf8')
      const created = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: Buffer.from(JSON.stringify({ name, categoryId: 7 }), 'utf8') })
      assert.equal(created.statusCode, 201, created.body)
      const { id } = created.json()
      assert.deepEqual(created.json(), { id, name, categoryId: 7 })
      assert.ok(created.rawPayload.includes(encoded), 'createPet response holds the exact bytes')
      const fetched = await api.inject({ url: `/v1/pets/${id}`, headers: api.auth })
      assert.deepEqual(fetched.json(), { id, name, categoryId: 7 })
      assert.ok(fetched.rawPayload.includes(encoded), 'getPet response holds the exact bytes')
      const listed = await api.inject({ url: '/v1/pets?limit=100', headers: api.auth })
      assert.ok(listed.rawPayload.includes(encoded), 'listPets response holds the exact bytes')
    })
  }
})

test('a name of 201 code points is 400, whether ASCII, emoji or combining marks', async (t) => {
  const api = await buildTestApp(t)
  const tooLong: Array<[what: string, name: string]> = [['ASCII', 'x'.repeat(201)], ['emoji', '🐶'.repeat(201)], ['combining marks', 'e\u0301'.repeat(100) + 'e']]
  for (const [what, name] of tooLong) {
    await t.test(what, async () => {
      const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: JSON.stringify({ name, categoryId: 7 }) })
      assertError(res, 400, 'invalid_request', 'Invalid request: body.name must NOT have more than 200 characters.', {
        details: [{ field: 'body.name', message: 'must NOT have more than 200 characters' }]
      })
    })
  }
  assert.equal(await api.store.countPets(), 0)
})
