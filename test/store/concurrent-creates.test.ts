import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer, tempDir } from '../helpers/processes.ts'

const CREATES = 200

test(`${CREATES} concurrent creates over real HTTP get ${CREATES} distinct ids, all listed afterwards`, async (t) => {
  const dir = tempDir(t)
  const server = await startServer(t, { DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}`, MAX_CONNECTIONS_PER_ADDRESS: '0' })
  const key = readFileSync(join(dir, 'first-api-key'), 'utf8').trim()
  const authorization = `Bearer ${key}`

  const responses = await Promise.all(Array.from({ length: CREATES }, async (_, index) => {
    const res = await fetch(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `pet ${index}`, categoryId: index })
    })
    return { status: res.status, pet: await res.json() as { id: number, name: string, categoryId: number } }
  }))
  assert.deepEqual(responses.map((response) => response.status), Array(CREATES).fill(201))
  for (const [index, { pet }] of responses.entries()) assert.deepEqual(pet, { id: pet.id, name: `pet ${index}`, categoryId: index })
  const created = responses.map((response) => response.pet.id)
  assert.equal(new Set(created).size, CREATES, 'distinct ids')

  const listed: number[] = []
  let next: string | undefined = `${server.url}/v1/pets?limit=100`
  for (let pages = 0; next !== undefined; pages++) {
    assert.ok(pages < 10, 'the next links end')
    const res: Response = await fetch(next, { headers: { authorization } })
    assert.equal(res.status, 200)
    listed.push(...(await res.json() as Array<{ id: number }>).map((pet) => pet.id))
    next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1]
  }
  assert.deepEqual(listed, created.toSorted((a, b) => a - b), 'each created pet listed once, in id order')
})
