import assert from 'node:assert/strict'
import { generateApiKey } from '../../src/auth/api-key.ts'
import type { PetStatus } from '../../src/contract/schemas.ts'
import type { Store } from '../../src/store/types.ts'
import { json, TEST_AUDIT, type TestApp } from './app.ts'

/**
 * Steps the API tests share. They go through TestApp's inject (checked against openapi.json)
 * or the Store interface only, so they run alike on every store.
 */

/** A pet as the JSON body shows it; ids in tests stay far below 2^53. */
export interface PetJson { id: number, name: string, categoryId: number, status?: PetStatus }

export type Api = Pick<TestApp, 'inject' | 'auth'>

export async function postPet (api: Api, body: Record<string, unknown>): Promise<PetJson> {
  const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, ...json }, payload: JSON.stringify(body) })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** Many pets at once, straight into the store: for tests about lists, not about createPet. */
export async function seedPets (store: Store, statuses: Array<PetStatus | undefined>): Promise<PetJson[]> {
  const pets: PetJson[] = []
  for (const [index, status] of statuses.entries()) {
    const pet = await store.createPet({ name: `pet ${index}`, categoryId: BigInt(index), ...(status ? { status } : {}) })
    pets.push({ ...pet, id: Number(pet.id), categoryId: Number(pet.categoryId) })
  }
  return pets
}

const NEXT_LINK = /^<([^>]+)>; rel="next"$/

/** The path and query that Link rel="next" points to, or undefined when there is no next page. */
export function nextPath (link: string | string[] | number | undefined): string | undefined {
  if (link === undefined) return undefined
  const target = NEXT_LINK.exec(String(link))?.[1]
  assert.ok(target, `not a single rel="next" link: ${String(link)}`)
  const url = new URL(target)
  return url.pathname + url.search
}

/** Follows rel="next" from the first page to the last; each page's body and the link it carried. */
export async function walkPages (api: Api, firstPath: string, maxPages = 1000): Promise<Array<{ path: string, pets: PetJson[] }>> {
  const pages: Array<{ path: string, pets: PetJson[] }> = []
  let path: string | undefined = firstPath
  while (path !== undefined) {
    assert.ok(pages.length < maxPages, `more than ${maxPages} pages: the links loop`)
    const res = await api.inject({ url: path, headers: api.auth })
    assert.equal(res.statusCode, 200, res.body)
    pages.push({ path, pets: res.json() })
    path = nextPath(res.headers.link)
  }
  return pages
}

/** A key that stops working at `expiresAt`; the CLI cannot make one, the store can. */
export async function issueKeyExpiringAt (store: Store, expiresAt: Date): Promise<string> {
  const generated = generateApiKey()
  await store.createApiKey({ name: 'expired', hash: generated.hash, prefix: generated.prefix, expiresAt: expiresAt.toISOString() }, TEST_AUDIT)
  return generated.key
}

export const ids = (pets: PetJson[]): number[] => pets.map((pet) => pet.id)
