import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { postPet } from '../helpers/api-steps.ts'
import { buildTestApp, json } from '../helpers/app.ts'

describe('createPet', () => {
  test('replies 201 with the whole Pet and a Location that getPet serves', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: '{"name":"Rex","categoryId":7,"status":"available"}' })
    assert.equal(res.statusCode, 201)
    const { id } = res.json()
    assert.ok(Number.isSafeInteger(id) && id > 0, `a positive id, got ${id}`)
    assert.deepEqual(res.json(), { id, name: 'Rex', categoryId: 7, status: 'available' })
    assert.equal(res.headers.location, `http://localhost:80/v1/pets/${id}`)
    const fetched = await api.inject({ url: new URL(String(res.headers.location)).pathname, headers: api.auth })
    assert.equal(fetched.statusCode, 200)
    assert.deepEqual(fetched.json(), res.json())
  })

  test('builds Location on PUBLIC_URL, with its trailing slash dropped', async (t) => {
    const api = await buildTestApp(t, { env: { PUBLIC_URL: 'https://staging.example.com/v1/' } })
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: '{"name":"Rex","categoryId":7}' })
    assert.equal(res.headers.location, `https://staging.example.com/v1/pets/${res.json().id}`)
  })

  test('never echoes a Host header that is not a plain host into Location: the link stays relative', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json, host: 'evil.example/x>; rel="next", <https://evil' }, payload: '{"name":"Rex","categoryId":7}' })
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers.location, `/v1/pets/${res.json().id}`)
  })

  test('assigns increasing ids that are never the same', async (t) => {
    const api = await buildTestApp(t)
    const first = await postPet(api, { name: 'A', categoryId: 1 })
    const second = await postPet(api, { name: 'A', categoryId: 1 })
    assert.ok(second.id > first.id, `${second.id} > ${first.id}`)
  })

  test('leaves status out of the Pet when it was omitted, on create, get and list', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: '{"name":"Rex","categoryId":7}' })
    const { id } = res.json()
    assert.equal(res.body, `{"id":${id},"name":"Rex","categoryId":7}`)
    const fetched = await api.inject({ url: `/v1/pets/${id}`, headers: api.auth })
    assert.equal(fetched.body, `{"id":${id},"name":"Rex","categoryId":7}`)
    const listed = await api.inject({ url: '/v1/pets', headers: api.auth })
    assert.equal(listed.body, `[{"id":${id},"name":"Rex","categoryId":7}]`)
  })

  test('ignores unknown fields, id included, and never stores them', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...api.auth, ...json },
      payload: '{"id":999999,"name":"Rex","categoryId":7,"status":"sold","color":"red","owner":{"name":"Ann"},"tags":["a"],"createdAt":null}'
    })
    assert.equal(res.statusCode, 201)
    const { id } = res.json()
    assert.notEqual(id, 999999)
    const pet = { id, name: 'Rex', categoryId: 7, status: 'sold' }
    assert.deepEqual(res.json(), pet)
    assert.deepEqual((await api.inject({ url: `/v1/pets/${id}`, headers: api.auth })).json(), pet)
    assert.deepEqual((await api.inject({ url: '/v1/pets', headers: api.auth })).json(), [pet])
  })

  test('accepts each status of the enumeration and returns it', async (t) => {
    const api = await buildTestApp(t)
    for (const status of ['available', 'pending', 'sold']) {
      const pet = await postPet(api, { name: 'Rex', categoryId: 1, status })
      assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 1, status })
    }
  })
})
