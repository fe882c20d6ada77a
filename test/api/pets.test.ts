import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, json } from '../helpers.ts'

describe('createPet', () => {
  test('answers 201 with the assigned id, the exact fields and a Location', async (t) => {
    const { inject, auth } = await buildTestApp(t)
    const res = await inject({ method: 'POST', url: '/v1/pets', headers: { ...auth, ...json }, payload: '{"name":"Rex","categoryId":9223372036854775807,"status":"available"}' })
    assert.equal(res.statusCode, 201)
    assert.equal(res.body, '{"id":1,"name":"Rex","categoryId":9223372036854775807,"status":"available"}')
    assert.equal(res.headers.location, 'http://localhost:80/v1/pets/1')
  })
})
