import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { listenTestApp } from '../helpers/raw-http.ts'

/**
 * One program's burst, as an HTTP client pool sends it: each concurrent request on a
 * connection of its own (Node's fetch opens one per request in flight), all from one address,
 * against the default settings. While the process has room, every one is served.
 */

interface Reply { status: number, body: unknown }

async function fetchJson (url: string, init: RequestInit): Promise<Reply> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.json() }
}

describe('bursts from one address', () => {
  test('200 concurrent creates, each on its own connection, all get 201, and all 200 are then listed', async (t) => {
    const api = await listenTestApp(t)
    let connections = 0
    api.app.server.on('connection', () => { connections++ })
    const base = `http://127.0.0.1:${api.port}/v1`
    const names = Array.from({ length: 200 }, (_, i) => `burst-${i}`)
    const created = await Promise.all(names.map((name) => fetchJson(`${base}/pets`, {
      method: 'POST',
      headers: { ...api.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1, status: 'available' })
    })))
    assert.deepEqual(created.map(({ status }) => status), Array(200).fill(201))
    assert.ok(connections >= 200, `one connection a request: ${connections} connections`)

    const listed: unknown[] = []
    for (let next: string | undefined = `${base}/pets?limit=100`; next !== undefined;) {
      const response: Response = await fetch(next, { headers: api.auth })
      assert.equal(response.status, 200)
      listed.push(...await response.json() as unknown[])
      next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
    }
    const byId = (a: unknown, b: unknown) => (a as { id: number }).id - (b as { id: number }).id
    assert.deepEqual(listed, created.map(({ body }) => body).sort(byId))
  })

  test('500 concurrent keyed reads, each on its own connection, are all served', async (t) => {
    const api = await listenTestApp(t)
    let connections = 0
    api.app.server.on('connection', () => { connections++ })
    const url = `http://127.0.0.1:${api.port}/v1/pets?limit=5`
    const replies = await Promise.all(Array.from({ length: 500 }, () => fetchJson(url, { headers: api.auth })))
    assert.deepEqual(replies, Array(500).fill({ status: 200, body: [] }))
    assert.ok(connections >= 500, `one connection a request: ${connections} connections`)
  })
})
