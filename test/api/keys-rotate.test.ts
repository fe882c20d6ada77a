import assert from 'node:assert/strict'
import { test } from 'node:test'
import { generateApiKey } from '../../src/auth/keys.ts'
import { buildTestApp, issueKey } from '../helpers.ts'
import { runCli } from '../processes.ts'

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
  assert.equal(rotated.stderr, `key ${id} (deploy-bot) keeps working until ${until}; the new key has id ${id + 1}\n`)

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
  assert.deepEqual(Object.keys(record), ['id', 'name', 'prefix', 'scope', 'createdAt', 'lastUsedAt', 'revokedAt', 'expiresAt', 'key', 'old'])
  assert.equal(record.prefix, record.key.slice(0, 12))
  assert.deepEqual({ ...record.old, createdAt: undefined }, { id, name: 'ci', prefix: record.old.prefix, scope: 'write', createdAt: undefined, lastUsedAt: null, revokedAt: null, expiresAt: record.old.expiresAt })
})

test('keys rotate keeps an earlier expiry the old key already has', async (t) => {
  const { store, url } = await buildTestApp(t)
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
  const generated = generateApiKey()
  const { id } = await store.createApiKey({ name: 'short-lived', hash: generated.hash, prefix: generated.prefix, expiresAt })
  const rotated = await runCli(['keys', 'rotate', String(id), '--grace', '7d', '--json'], { DATABASE_URL: url })
  assert.equal(rotated.code, 0, rotated.stderr)
  assert.equal(JSON.parse(rotated.stdout).old.expiresAt, expiresAt)
})

test('keys rotate refuses a revoked or unknown key (exit 1) and bad options (exit 2)', async (t) => {
  const { store, url } = await buildTestApp(t)
  const { id } = await issueKey(store, 'old')
  await store.revokeApiKey(id)
  const usage = 'Usage: npm run --silent petstore -- keys rotate ID [--keep-old-until ISO | --grace DURATION] [--json]\n'
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
