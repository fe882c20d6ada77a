import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertError, fetchedReply, type ErrorReply } from '../helpers/errors.ts'
import { freshSchema } from '../helpers/pg-schema.ts'
import { runCli, startServer, type ServerProcess } from '../helpers/processes.ts'

interface CallResult { status: number, body: unknown }

async function send (server: ServerProcess, key: string, method: string, path: string, body?: unknown): Promise<ErrorReply & { status: number }> {
  return fetchedReply(await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000)
  }))
}

async function call (server: ServerProcess, key: string, method: string, path: string, body?: unknown): Promise<CallResult> {
  const reply = await send(server, key, method, path, body)
  return { status: reply.status, body: JSON.parse(reply.body) as unknown }
}

async function createKey (url: string, name: string): Promise<{ id: number, key: string }> {
  const result = await runCli(['keys', 'create', '--name', name, '--json'], { DATABASE_URL: url })
  assert.equal(result.code, 0, result.stderr)
  return JSON.parse(result.stdout)
}

// The documented bound on PostgreSQL: a key an instance has cached is trusted for at most
// KEY_CACHE_TTL_MS, so a revoked key stops working everywhere within it.
const KEY_CACHE_TTL_MS = 500
const SLACK_MS = 1000

/** Asks until the key is refused (or the bound and slack have passed twice over). */
async function refusedAfter (server: ServerProcess, key: string): Promise<{ response: ErrorReply, at: number }> {
  const deadline = performance.now() + 2 * (KEY_CACHE_TTL_MS + SLACK_MS)
  for (;;) {
    const response = await send(server, key, 'GET', '/v1/pets?limit=1')
    if (response.status === 401 || performance.now() > deadline) return { response, at: performance.now() }
    await sleep(20)
  }
}

const UNAUTHORIZED = 'A valid API key is required: send Authorization: Bearer <key>.'

test('two server processes on one PostgreSQL schema give distinct ids, read each other\'s pets, and both refuse a revoked key within KEY_CACHE_TTL_MS', { timeout: 120_000 }, async (t) => {
  const { url } = freshSchema(t)
  const keep = await createKey(url, 'kept')
  const revoked = await createKey(url, 'to-revoke')
  const env = { DATABASE_URL: url, KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS) }
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)]) as [ServerProcess, ServerProcess]
  assert.notEqual(a.url, b.url)

  // Interleaved and concurrent: even-numbered creates go to A, odd ones to B.
  const creates = await Promise.all(Array.from({ length: 12 }, (_, i) =>
    call(i % 2 === 0 ? a : b, keep.key, 'POST', '/v1/pets', { name: `pet-${i}`, categoryId: 100 + i })))
  assert.deepEqual(creates.map((res) => res.status), Array(12).fill(201))
  const pets = creates.map((res) => res.body as { id: number, name: string })
  assert.equal(new Set(pets.map((pet) => pet.id)).size, 12, `ids: ${pets.map((pet) => pet.id)}`)

  // Each pet is read on the instance that did not create it.
  for (const [i, pet] of pets.entries()) {
    assert.deepEqual(await call(i % 2 === 0 ? b : a, keep.key, 'GET', `/v1/pets/${pet.id}`), { status: 200, body: pet })
  }
  const everyPet = [...pets].sort((x, y) => x.id - y.id)
  assert.deepEqual(await call(a, keep.key, 'GET', '/v1/pets?limit=100'), { status: 200, body: everyPet })
  assert.deepEqual(await call(b, keep.key, 'GET', '/v1/pets?limit=100'), { status: 200, body: everyPet })

  assert.equal((await call(a, revoked.key, 'GET', '/v1/pets?limit=1')).status, 200)
  assert.equal((await call(b, revoked.key, 'GET', '/v1/pets?limit=1')).status, 200)
  const revoke = await runCli(['keys', 'revoke', String(revoked.id)], { DATABASE_URL: url })
  assert.deepEqual({ ...revoke, stderr: JSON.parse(revoke.stderr).change }, { code: 0, stdout: `revoked key ${revoked.id}\n`, stderr: 'revoke' })
  const revokedAt = performance.now()
  const [refusedByA, refusedByB] = await Promise.all([refusedAfter(a, revoked.key), refusedAfter(b, revoked.key)])
  assertError(refusedByA.response, 401, 'unauthorized', UNAUTHORIZED, { label: 'instance A' })
  assertError(refusedByB.response, 401, 'unauthorized', UNAUTHORIZED, { label: 'instance B' })
  for (const refused of [refusedByA, refusedByB]) {
    assert.ok(refused.at - revokedAt <= KEY_CACHE_TTL_MS + SLACK_MS, `refused ${Math.round(refused.at - revokedAt)} ms after the revocation`)
  }
  assert.equal((await call(a, keep.key, 'GET', '/v1/pets?limit=1')).status, 200)
  assert.equal((await call(b, keep.key, 'GET', '/v1/pets?limit=1')).status, 200)

  const listed = await runCli(['keys', 'list', '--json'], { DATABASE_URL: url })
  assert.deepEqual(JSON.parse(listed.stdout).map((key: { id: number, name: string, revokedAt: string | null }) => [key.id, key.name, key.revokedAt !== null]),
    [[keep.id, 'kept', false], [revoked.id, 'to-revoke', true]])
})
