import assert from 'node:assert/strict'
import { test } from 'node:test'
import { generateApiKey } from '../../src/auth/api-key.ts'
import { buildTestApp, issueKey, json, TEST_AUDIT } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { runCli } from '../helpers/processes.ts'

const KEY_LINE = /^(psk_[A-Za-z0-9_-]{43})\n$/

test('keys rotate prints the new key alone; the old key works until --keep-old-until, then 401', async (t) => {
  let now = Date.now()
  const { inject, store, url } = await buildTestApp(t, { now: () => now })
  const { key: oldKey, id } = await issueKey(store, 'deploy-bot')
  const until = new Date(now + 3_600_000).toISOString()

  const rotated = await runCli(['keys', 'rotate', String(id), '--keep-old-until', until], { DATABASE_URL: url })
  assert.equal(rotated.code, 0)
  const newKey = KEY_LINE.exec(rotated.stdout)?.[1]
  assert.ok(newKey, `stdout is the new key alone: ${JSON.stringify(rotated.stdout)}`)
  const [changes, notes] = [rotated.stderr.split('\n').filter((line) => line.startsWith('{')), rotated.stderr.split('\n').filter((line) => !line.startsWith('{'))]
  assert.deepEqual(changes.map((line) => JSON.parse(line).change), ['rotate', 'create', 'expires'], 'one key_change line per row of the key trail')
  assert.deepEqual(notes, [`key ${id} (deploy-bot) keeps working until ${until}; the new key has id ${id + 1}`, ''])

  const call = (key: string) => inject({ url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
  assert.equal((await call(oldKey)).statusCode, 200, 'the old key still works before its expiry')
  assert.equal((await call(newKey)).statusCode, 200)
  const keys = (await store.listApiKeys()).filter((key) => key.id >= id)
  assert.deepEqual(keys.map(({ id, name, expiresAt, revokedAt }) => ({ id, name, expiresAt, revokedAt })), [
    { id, name: 'deploy-bot', expiresAt: until, revokedAt: null },
    { id: id + 1, name: 'deploy-bot', expiresAt: null, revokedAt: null }
  ])

  now = Date.parse(until) + 1
  assert.equal((await call(oldKey)).statusCode, 401, 'the old key stops at its expiry')
  assert.equal((await call(newKey)).statusCode, 200)
})

test('keys rotate --grace sets the expiry from now, and --json gives both records', async (t) => {
  const { store, url } = await buildTestApp(t)
  const { id } = await issueKey(store, 'ci')
  const before = Date.now()
  const rotated = await runCli(['keys', 'rotate', String(id), '--grace', '30m', '--json'], { DATABASE_URL: url })
  assert.equal(rotated.code, 0)
  const record = JSON.parse(rotated.stdout)
  const expires = Date.parse(record.old.expiresAt)
  assert.ok(expires >= before + 30 * 60_000 && expires <= Date.now() + 30 * 60_000, record.old.expiresAt)
  assert.deepEqual(Object.keys(record), ['id', 'name', 'prefix', 'scope', 'createdAt', 'lastUsedAt', 'revokedAt', 'expiresAt', 'lineageId', 'rotatedFrom', 'key', 'old'])
  assert.equal(record.prefix, record.key.slice(0, 12))
  assert.deepEqual({ ...record.old, createdAt: undefined }, { id, name: 'ci', prefix: record.old.prefix, scope: 'write', createdAt: undefined, lastUsedAt: null, revokedAt: null, expiresAt: record.old.expiresAt, lineageId: id, rotatedFrom: null })
  assert.deepEqual({ lineageId: record.lineageId, rotatedFrom: record.rotatedFrom }, { lineageId: id, rotatedFrom: id }, 'the successor is linked to its predecessor and shares its lineage')
})

test('keys rotate keeps an earlier expiry the old key already has', async (t) => {
  const { store, url } = await buildTestApp(t)
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
  const generated = generateApiKey()
  const { id } = await store.createApiKey({ name: 'short-lived', hash: generated.hash, prefix: generated.prefix, expiresAt }, TEST_AUDIT)
  const rotated = await runCli(['keys', 'rotate', String(id), '--grace', '7d', '--json'], { DATABASE_URL: url })
  assert.equal(rotated.code, 0, rotated.stderr)
  assert.equal(JSON.parse(rotated.stdout).old.expiresAt, expiresAt)
})

test('keys rotate refuses a revoked or unknown key (exit 1) and bad options (exit 2)', async (t) => {
  const { store, url } = await buildTestApp(t)
  const { id } = await issueKey(store, 'old')
  await store.revokeApiKey(id, TEST_AUDIT)
  const usage = 'Usage: npm run --silent petstore -- keys rotate ID [--keep-old-until ISO | --grace DURATION] [--actor NAME] [--json]\n'
  const cases: Array<[string[], { code: number, stdout: string, stderr: string }]> = [
    [[String(id)], { code: 1, stdout: '', stderr: `petstore keys rotate: key ${id} is revoked or expired; issue a new one with keys create\n` }],
    [['999'], { code: 1, stdout: '', stderr: 'petstore keys rotate: no key has id 999\n' }],
    [[String(id), '--grace', '1h', '--keep-old-until', '2099-01-01T00:00:00Z'], { code: 2, stdout: '', stderr: 'petstore keys rotate: give --keep-old-until or --grace, not both\n' + usage }],
    [[String(id), '--keep-old-until', '2001-01-01T00:00:00Z'], { code: 2, stdout: '', stderr: 'petstore keys rotate: --keep-old-until 2001-01-01T00:00:00Z is not in the future; to stop a key now, use keys revoke\n' + usage }],
    [[String(id), '--keep-old-until', 'tomorrow'], { code: 2, stdout: '', stderr: 'petstore keys rotate: --keep-old-until needs an ISO 8601 time with a zone, e.g. 2030-01-31T12:00:00Z; got "tomorrow"\n' + usage }],
    [[String(id), '--grace', '2w'], { code: 2, stdout: '', stderr: 'petstore keys rotate: --grace needs a duration such as 30m, 24h or 7d; got "2w"\n' + usage }]
  ]
  for (const [args, expected] of cases) assert.deepEqual(await runCli(['keys', 'rotate', ...args], { DATABASE_URL: url }), expected, args.join(' '))
  assert.equal((await store.listApiKeys()).length, 2, 'nothing was issued beside the app\'s own key and this one')
})

test('insertPets writes a batch in one transaction: a row the database refuses leaves none of the batch', async (t) => {
  const { store } = await buildTestApp(t)
  assert.equal(await store.insertPets([{ name: 'A', categoryId: 1n }, { name: 'B', categoryId: 9223372036854775807n, status: 'sold' }]), 2)
  await assert.rejects(store.insertPets([{ name: 'C', categoryId: 3n }, { name: 'D', categoryId: 4n, status: 'lost' as 'sold' }]))
  assert.deepEqual(await store.listPets({ limit: 10 }), [
    { id: 1n, name: 'A', categoryId: 1n },
    { id: 2n, name: 'B', categoryId: 9223372036854775807n, status: 'sold' }
  ])
  assert.equal(await store.insertPets([]), 0)
})

/** The new key keys rotate printed; fails the test when the rotation did not happen. */
async function rotateWithCli (url: string, id: number): Promise<string> {
  const rotated = await runCli(['keys', 'rotate', String(id)], { DATABASE_URL: url })
  assert.equal(rotated.code, 0, rotated.stderr)
  return KEY_LINE.exec(rotated.stdout)![1]!
}

test('a retry after keys rotate replays: the successors see the predecessor\'s Idempotency-Key; another body is 422; other keys do not see it', async (t) => {
  const api = await buildTestApp(t)
  const create = (key: string, body: string) => api.inject({
    method: 'POST', url: '/v1/pets', payload: body, headers: { authorization: `Bearer ${key}`, ...json, 'idempotency-key': 'order-1' }
  })
  const first = await create(api.key, '{"name":"Rex","categoryId":7}')
  assert.equal(first.statusCode, 201, first.body)
  const pet = first.json()

  const successor = await rotateWithCli(api.url, api.keyId)
  const replayed = await create(successor, '{"name":"Rex","categoryId":7}')
  assert.equal(replayed.statusCode, 201, replayed.body)
  assert.equal(replayed.headers['idempotent-replayed'], 'true')
  assert.equal(replayed.headers.location, first.headers.location)
  assert.deepEqual(replayed.json(), pet)

  const conflict = await create(successor, '{"name":"Tom","categoryId":7}')
  assertError(conflict, 422, 'idempotency_conflict', 'This Idempotency-Key was already used with a different body; use a new key for a new request.')

  // A chain of two rotations is still one lineage.
  const successorId = (await api.store.listApiKeys()).at(-1)!.id
  const third = await rotateWithCli(api.url, successorId)
  const again = await create(third, '{"name":"Rex","categoryId":7}')
  assert.equal(again.headers['idempotent-replayed'], 'true')
  assert.deepEqual(again.json(), pet)

  const other = await issueKey(api.store, 'other')
  const unrelated = await create(other.key, '{"name":"Rex","categoryId":7}')
  assert.equal(unrelated.statusCode, 201, unrelated.body)
  assert.equal(unrelated.headers['idempotent-replayed'], undefined)
  assert.notEqual(unrelated.json().id, pet.id)
  assert.equal(await api.store.countPets(), 2)
})

test('keys rotate refuses a key whose successor is still usable, in grace too (exit 1, naming it); once the successor is revoked it rotates', async (t) => {
  const { store, url } = await buildTestApp(t)
  const { id } = await issueKey(store, 'deploy-bot')
  await rotateWithCli(url, id)
  const keys = await store.listApiKeys()
  const successor = keys.at(-1)!
  const refusal = { code: 1, stdout: '', stderr: `petstore keys rotate: key ${id} was already rotated: its successor, key ${successor.id}, is still usable; rotate key ${successor.id}, or revoke it first\n` }
  assert.deepEqual(await runCli(['keys', 'rotate', String(id), '--grace', '7d'], { DATABASE_URL: url }), refusal)
  assert.deepEqual(await store.listApiKeys(), keys, 'nothing was issued and no expiry moved')

  // The successor rotated in its turn is within its grace: still usable, still refused.
  await rotateWithCli(url, successor.id)
  const inGrace = (await store.listApiKeys()).find((key) => key.id === successor.id)!
  assert.deepEqual(await runCli(['keys', 'rotate', String(id)], { DATABASE_URL: url }), refusal)
  const generated = generateApiKey()
  const now = new Date().toISOString()
  assert.deepEqual(await store.rotateApiKey(id, { name: 'deploy-bot', hash: generated.hash, prefix: generated.prefix }, now, now, TEST_AUDIT), { outcome: 'has_successor', successor: inGrace })

  await store.revokeApiKey(successor.id, TEST_AUDIT)
  await rotateWithCli(url, id)
})

test('rotations of one key at once: one issues the successor, the others are refused', async (t) => {
  const { store } = await buildTestApp(t)
  const { id } = await issueKey(store, 'racer')
  const now = new Date().toISOString()
  const later = new Date(Date.now() + 3_600_000).toISOString()
  const rotate = () => {
    const generated = generateApiKey()
    return store.rotateApiKey(id, { name: 'racer', hash: generated.hash, prefix: generated.prefix }, later, now, TEST_AUDIT)
  }
  // Several, so that on PostgreSQL they overlap, each on a connection opened beforehand.
  await Promise.all(Array.from({ length: 8 }, () => store.countApiKeys()))
  const outcomes = await Promise.all(Array.from({ length: 8 }, rotate))
  assert.deepEqual(outcomes.map((rotation) => rotation.outcome).sort(), [...Array(7).fill('has_successor'), 'rotated'])
  assert.equal((await store.listApiKeys()).filter((key) => key.rotatedFrom === id).length, 1)
})
