import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ids, nextPath, postPet, seedPets, walkPages } from '../helpers/api-steps.ts'
import { buildTestApp } from '../helpers/app.ts'
import type { PetStatus } from '../../src/contract/schemas.ts'

const MIXED: Array<PetStatus | undefined> = ['available', 'pending', undefined, 'sold', 'available', 'available', undefined, 'pending', 'sold', 'available', 'available']

describe('listPets', () => {
  test('replies with 20 pets in ascending id order when limit is omitted, then a next page with the rest', async (t) => {
    const api = await buildTestApp(t)
    const pets = await seedPets(api.store, Array(21).fill(undefined))
    const first = await api.inject({ url: '/v1/pets', headers: api.auth })
    assert.equal(first.statusCode, 200)
    assert.deepEqual(first.json(), pets.slice(0, 20))
    const next = nextPath(first.headers.link)
    assert.ok(next, 'a next link when more pets follow')
    const last = await api.inject({ url: next, headers: api.auth })
    assert.deepEqual(last.json(), pets.slice(20))
    assert.equal(last.headers.link, undefined)
  })

  test('replies with an empty array and no link on an empty store', async (t) => {
    const api = await buildTestApp(t)
    const res = await api.inject({ url: '/v1/pets', headers: api.auth })
    assert.equal(res.statusCode, 200)
    assert.equal(res.body, '[]')
    assert.equal(res.headers.link, undefined)
  })

  test('honours limit 1 and limit 100, the bounds of the allowed range', async (t) => {
    const api = await buildTestApp(t)
    const pets = await seedPets(api.store, Array(101).fill('sold'))
    const one = await api.inject({ url: '/v1/pets?limit=1', headers: api.auth })
    assert.deepEqual(one.json(), pets.slice(0, 1))
    const hundred = await api.inject({ url: '/v1/pets?limit=100', headers: api.auth })
    assert.deepEqual(hundred.json(), pets.slice(0, 100))
    const rest = await api.inject({ url: nextPath(hundred.headers.link)!, headers: api.auth })
    assert.deepEqual(rest.json(), pets.slice(100))
  })

  test('lists only pets whose status equals the filter; pets without status only in unfiltered lists', async (t) => {
    const api = await buildTestApp(t)
    const pets = await seedPets(api.store, MIXED)
    for (const status of ['available', 'pending', 'sold'] as const) {
      const res = await api.inject({ url: `/v1/pets?status=${status}&limit=100`, headers: api.auth })
      assert.deepEqual(res.json(), pets.filter((pet) => pet.status === status), status)
    }
    const all = await api.inject({ url: '/v1/pets?limit=100', headers: api.auth })
    assert.deepEqual(all.json(), pets)
  })

  test('orders by id whatever the order of statuses and names', async (t) => {
    const api = await buildTestApp(t)
    const created = []
    for (const [name, status] of [['Zed', 'sold'], ['Abe', 'available'], ['Moe', 'pending']] as const) {
      created.push(await postPet(api, { name, categoryId: 1, status }))
    }
    const listed = (await api.inject({ url: '/v1/pets', headers: api.auth })).json()
    assert.deepEqual(listed, created)
    assert.deepEqual(ids(listed), ids(created).toSorted((a, b) => a - b))
  })

  test('a next link keeps limit and status and carries an opaque cursor, under PUBLIC_URL', async (t) => {
    const api = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.example.com/v1' } })
    await seedPets(api.store, ['pending', 'pending', 'pending'])
    const res = await api.inject({ url: '/v1/pets?status=pending&limit=2', headers: api.auth })
    assert.match(String(res.headers.link), /^<https:\/\/api\.example\.com\/v1\/pets\?limit=2&status=pending&cursor=[A-Za-z0-9_-]+>; rel="next"$/)
  })

  // Every page size, from page sizes that divide the count exactly to ones larger than it.
  const walks: Array<{ filter?: PetStatus, limit: number }> = [
    ...[1, 2, 3, 5, 11, 12, 100].map((limit) => ({ limit })),
    ...[1, 2, 5, 6].map((limit) => ({ filter: 'available' as const, limit })),
    { filter: 'pending', limit: 1 },
    { filter: 'sold', limit: 2 }
  ]
  for (const { filter, limit } of walks) {
    test(`following next with limit ${limit}${filter ? ` and status ${filter}` : ''} visits every matching pet once; the last page has no next`, async (t) => {
      const api = await buildTestApp(t)
      const pets = await seedPets(api.store, MIXED)
      const expected = filter ? pets.filter((pet) => pet.status === filter) : pets
      const pages = await walkPages(api, `/v1/pets?limit=${limit}${filter ? `&status=${filter}` : ''}`)
      assert.deepEqual(pages.flatMap((page) => page.pets), expected)
      assert.deepEqual(pages.map((page) => page.pets.length), pageSizes(expected.length, limit))
    })
  }

  test('following next from any page reaches exactly the pets after it', async (t) => {
    const api = await buildTestApp(t)
    const pets = await seedPets(api.store, MIXED)
    const pages = await walkPages(api, '/v1/pets?limit=3')
    for (const [index, page] of pages.entries()) {
      const rest = await walkPages(api, page.path)
      assert.deepEqual(rest.flatMap((p) => p.pets), pets.slice(index * 3), `from page ${index + 1}`)
    }
  })

  test('pets added during a walk show up once, at its end', async (t) => {
    const api = await buildTestApp(t)
    const before = await seedPets(api.store, ['sold', 'sold', 'sold'])
    const first = await api.inject({ url: '/v1/pets?limit=2', headers: api.auth })
    const added = await postPet(api, { name: 'Late', categoryId: 3, status: 'sold' })
    const rest = await walkPages(api, nextPath(first.headers.link)!)
    assert.deepEqual([...first.json(), ...rest.flatMap((page) => page.pets)], [...before, added])
  })
})

/** How many pets each page holds when `count` pets are read `limit` at a time (at least one page). */
function pageSizes (count: number, limit: number): number[] {
  const sizes = Array(Math.floor(count / limit)).fill(limit)
  if (count % limit > 0 || sizes.length === 0) sizes.push(count % limit)
  return sizes
}
