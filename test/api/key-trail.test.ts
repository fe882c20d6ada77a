import assert from 'node:assert/strict'
import { hostname, userInfo } from 'node:os'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import pg from 'pg'
import { generateApiKey, hashApiKey } from '../../src/auth/api-key.ts'
import { openStore, sqlitePath } from '../../src/store/index.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import type { ApiKeyRecord, KeyEvent } from '../../src/store/types.ts'
import { buildTestApp, createTestStore, issueKey, STORE_KIND, TEST_AUDIT } from '../helpers/app.ts'
import { TEST_DATABASE_URL } from '../helpers/pg-schema.ts'
import { runCli, type CliResult } from '../helpers/processes.ts'

/**
 * The key trail: every key change is a row, written with the change or not at all, naming who
 * made it and where, and never holding a key or its hash; the CLI logs each as one JSON line.
 */

const HOST = hostname()

/** Runs one statement on the test's database beside the store, as an operator's client would. */
async function sql (url: string, text: string): Promise<Array<Record<string, unknown>>> {
  if (STORE_KIND === 'sqlite') {
    const db = new DatabaseSync(sqlitePath(url))
    try { return db.prepare(text).all() } finally { db.close() }
  }
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(`SET search_path TO ${new URL(url).searchParams.get('schema')}`)
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

async function cli (url: string, args: string[]): Promise<CliResult> {
  const run = await runCli(['keys', ...args], { DATABASE_URL: url })
  assert.equal(run.code, 0, run.stderr)
  return run
}

/** The key_change lines a command wrote on stderr, without the fields that change per run. */
function loggedChanges (stderr: string): Array<Record<string, unknown>> {
  return stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => {
    const { time, pid, ...rest } = JSON.parse(line)
    assert.equal(typeof time, 'number')
    assert.equal(typeof pid, 'number')
    return rest
  })
}

const row = (change: KeyEvent['change'], key: ApiKeyRecord, at: string, actor: string, relatedKeyId: number | null = null): KeyEvent =>
  ({ at, change, keyId: key.id, prefix: key.prefix, name: key.name, scope: key.scope, relatedKeyId, actor, host: HOST })

const line = (event: KeyEvent, msg: string) => ({ level: 30, hostname: HOST, event: 'key_change', ...event, msg: `key change by ${event.actor} on ${event.host}: ${msg}` })

test(`keys create, rotate and revoke each record who, where, when and which key, and log one key_change line per row (${STORE_KIND})`, async (t) => {
  const { store, url, keyId } = await buildTestApp(t)
  const created = await cli(url, ['create', '--name', 'deploy-bot', '--scope', 'read', '--actor', 'alice', '--json'])
  const first: ApiKeyRecord = JSON.parse(created.stdout)
  const until = new Date(Date.now() + 3_600_000).toISOString()
  const rotated = await cli(url, ['rotate', String(first.id), '--keep-old-until', until, '--actor', ' bob ', '--json'])
  const successor: ApiKeyRecord = JSON.parse(rotated.stdout)
  const revoked = await cli(url, ['revoke', String(successor.id), '--actor', 'carol'])
  const revokedAt = (await store.listApiKeys()).find((key) => key.id === successor.id)!.revokedAt!

  const events = [
    row('create', first, first.createdAt, 'alice'),
    row('rotate', first, successor.createdAt, 'bob', successor.id),
    row('create', successor, successor.createdAt, 'bob', first.id),
    row('revoke', successor, revokedAt, 'carol'),
    row('expires', first, until, 'bob')
  ]
  const own = (await store.listApiKeys()).find((key) => key.id === keyId)!
  assert.deepEqual(await store.listKeyEvents({}), [{ ...row('create', own, own.createdAt, TEST_AUDIT.actor), host: TEST_AUDIT.host }, ...events])
  assert.deepEqual(JSON.parse((await cli(url, ['log', '--json'])).stdout), await store.listKeyEvents({}), 'keys log --json prints the rows as stored')

  assert.deepEqual(loggedChanges(created.stderr), [line(events[0]!, `issued key ${first.id} (deploy-bot, read)`)])
  assert.deepEqual(loggedChanges(rotated.stderr), [
    line(events[1]!, `rotated key ${first.id} (deploy-bot); its successor is key ${successor.id}`),
    line(events[2]!, `issued key ${successor.id} (deploy-bot, read) to replace key ${first.id}`),
    line(events[4]!, `key ${first.id} (deploy-bot) stops working at ${until}`)
  ])
  assert.deepEqual(loggedChanges(revoked.stderr), [line(events[3]!, `revoked key ${successor.id} (deploy-bot)`)])
  assert.equal(revoked.stdout, `revoked key ${successor.id}\n`, 'stdout stays the command\'s own output')
})

test(`without --actor a change is recorded as the OS user's; --actor must name someone (${STORE_KIND})`, async (t) => {
  const { store, url } = await buildTestApp(t)
  const record: ApiKeyRecord = JSON.parse((await cli(url, ['create', '--name', 'nightly', '--json'])).stdout)
  assert.deepEqual((await store.listKeyEvents({ keyId: record.id })), [row('create', record, record.createdAt, userInfo().username)])
  const refused = await runCli(['keys', 'revoke', String(record.id), '--actor', '  '], { DATABASE_URL: url })
  assert.deepEqual({ code: refused.code, stderr: refused.stderr.split('\n')[0] }, { code: 2, stderr: 'petstore keys revoke: --actor NAME needs 1 to 100 characters' })
  assert.equal((await store.listKeyEvents({ keyId: record.id })).length, 1)
})

test(`a key change that fails or changes nothing records nothing (${STORE_KIND})`, async (t) => {
  const { store, url, keyId } = await buildTestApp(t)
  const revoked = await issueKey(store, 'revoked')
  await store.revokeApiKey(revoked.id, TEST_AUDIT)
  const trail = await store.listKeyEvents({})
  const revokedAt = (await store.listApiKeys()).find((key) => key.id === revoked.id)!.revokedAt

  const refusals: Array<[string[], number]> = [[['revoke', '999'], 1], [['rotate', '999'], 1], [['rotate', String(revoked.id)], 1], [['create', '--name', 'x', '--actor', ''], 2]]
  for (const [args, code] of refusals) assert.equal((await runCli(['keys', ...args], { DATABASE_URL: url })).code, code, args.join(' '))
  const again = await cli(url, ['revoke', String(revoked.id)])
  assert.deepEqual(again, { code: 0, stdout: `key ${revoked.id} was already revoked at ${revokedAt}; nothing changed\n`, stderr: '' })
  assert.deepEqual(await store.listKeyEvents({}), trail, 'refused commands and a second revocation write no row')

  // The key change itself fails (a hash already in use): no row.
  const taken = await issueKey(store, 'taken')
  const withTaken = await store.listKeyEvents({})
  await assert.rejects(store.createApiKey({ name: 'twin', hash: hashApiKey(taken.key), prefix: 'psk_twin____' }, TEST_AUDIT))
  await assert.rejects(store.rotateApiKey(keyId, { name: 'test', hash: hashApiKey(taken.key), prefix: 'psk_twin____' }, '2099-01-01T00:00:00.000Z', new Date().toISOString(), TEST_AUDIT))
  assert.deepEqual(await store.listKeyEvents({}), withTaken)
  assert.equal((await store.listApiKeys()).find((key) => key.id === keyId)!.expiresAt, null, 'the failed rotation left the old key as it was')

  // The row cannot be written: the key change is not made either.
  await sql(url, 'ALTER TABLE key_events RENAME TO key_events_away')
  const generated = generateApiKey()
  await assert.rejects(store.revokeApiKey(keyId, TEST_AUDIT))
  await assert.rejects(store.createApiKey({ name: 'unrecorded', hash: generated.hash, prefix: generated.prefix }, TEST_AUDIT))
  await sql(url, 'ALTER TABLE key_events_away RENAME TO key_events')
  assert.deepEqual(await store.listKeyEvents({}), withTaken)
  const keys = await store.listApiKeys()
  assert.equal(keys.find((key) => key.id === keyId)!.revokedAt, null, 'the revocation that could not be recorded was not made')
  assert.equal(keys.some((key) => key.name === 'unrecorded'), false, 'the key that could not be recorded was not issued')
})

test(`keys log --since takes an ISO 8601 time or date, or a duration back from now; --key one key's rows (${STORE_KIND})`, async (t) => {
  const { url } = await buildTestApp(t)
  const a: ApiKeyRecord = JSON.parse((await cli(url, ['create', '--name', 'a', '--json'])).stdout)
  const b: ApiKeyRecord = JSON.parse((await cli(url, ['create', '--name', 'b', '--json'])).stdout)
  const rotated = JSON.parse((await cli(url, ['rotate', String(b.id), '--grace', '7d', '--json'])).stdout)
  const log = async (...args: string[]) => (JSON.parse((await cli(url, ['log', '--json', ...args])).stdout) as KeyEvent[]).map(({ change, keyId }) => `${change} ${keyId}`)

  const fromB = [`create ${b.id}`, `rotate ${b.id}`, `create ${rotated.id}`, `expires ${b.id}`]
  assert.deepEqual(await log('--since', b.createdAt), fromB)
  assert.deepEqual(await log('--since', '1h'), ['create 1', `create ${a.id}`, ...fromB])
  const inTwoDays = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)
  assert.deepEqual(await log('--since', inTwoDays), [`expires ${b.id}`], 'the scheduled expiry is dated when it happens')
  assert.deepEqual(await log('--key', String(a.id)), [`create ${a.id}`])
  assert.deepEqual(await log('--since', '2000-01-01', '--key', String(b.id)), [`create ${b.id}`, `rotate ${b.id}`, `expires ${b.id}`])

  const text = (await cli(url, ['log', '--since', b.createdAt])).stdout.trimEnd().split('\n').map((cells) => cells.split('\t'))
  assert.deepEqual(text, [
    ['time', 'change', 'key', 'prefix', 'name', 'scope', 'actor', 'host', 'detail'],
    [b.createdAt, 'create', String(b.id), `${b.prefix}…`, 'b', 'write', userInfo().username, HOST, ''],
    [rotated.createdAt, 'rotate', String(b.id), `${b.prefix}…`, 'b', 'write', userInfo().username, HOST, `successor ${rotated.id}`],
    [rotated.createdAt, 'create', String(rotated.id), `${rotated.prefix}…`, 'b', 'write', userInfo().username, HOST, `replaces ${b.id}`],
    [rotated.old.expiresAt, 'expires', String(b.id), `${b.prefix}…`, 'b', 'write', userInfo().username, HOST, 'scheduled']
  ])
  const wrong = await runCli(['keys', 'log', '--since', 'last week'], { DATABASE_URL: url })
  assert.deepEqual({ code: wrong.code, stdout: wrong.stdout, stderr: wrong.stderr.split('\n')[0] }, {
    code: 2, stdout: '', stderr: 'petstore keys log: --since needs an ISO 8601 time (2030-01-31 or 2030-01-31T12:00:00Z) or a duration back from now (30m, 24h, 7d); got "last week"'
  })
})

test(`rows written by an older release or straight into the database cannot forge a row of keys list or keys log: their cells are quoted and escaped; --json shows them as stored (${STORE_KIND})`, async (t) => {
  const { store, url, cleanup } = await createTestStore()
  t.after(cleanup)
  // What the CLI now refuses, but an older release stored and any client of the database can.
  const name = 'ops\n9\tforged\tpsk_forged…\twrite'
  const audit = { actor: 'alice\n2030-01-01T00:00:00.000Z\trevoke\t1\tpsk_abc…\tci\twrite\tmallory', host: 'build\r\u001b[2K\u202eevil' }
  const generated = generateApiKey()
  const key = await store.createApiKey({ name, hash: generated.hash, prefix: generated.prefix }, audit)
  const revoked = await store.revokeApiKey(key.id, { actor: '"quoted"\u2028x', host: 'h\u009b' })
  assert.equal(revoked.outcome, 'revoked')
  const [record] = await store.listApiKeys()
  const [created, revoke] = await store.listKeyEvents({})

  const shownName = '"ops\\n9\\tforged\\tpsk_forged…\\twrite"'
  const list = await cli(url, ['list'])
  assert.equal(list.stdout, [
    'id\tname\tprefix\tscope\tcreated\tlast used\tstate',
    `${key.id}\t${shownName}\t${key.prefix}…\twrite\t${key.createdAt}\tnever used\trevoked ${record!.revokedAt}`
  ].join('\n') + '\n')
  const log = await cli(url, ['log'])
  assert.equal(log.stdout, [
    'time\tchange\tkey\tprefix\tname\tscope\tactor\thost\tdetail',
    `${created!.at}\tcreate\t${key.id}\t${key.prefix}…\t${shownName}\twrite\t"alice\\n2030-01-01T00:00:00.000Z\\trevoke\\t1\\tpsk_abc…\\tci\\twrite\\tmallory"\t"build\\r\\u001b[2K\\u202eevil"\t`,
    `${revoke!.at}\trevoke\t${key.id}\t${key.prefix}…\t${shownName}\twrite\t"\\"quoted\\"\\u2028x"\t"h\\u009b"\t`
  ].join('\n') + '\n')

  assert.deepEqual(JSON.parse((await cli(url, ['list', '--json'])).stdout).map((stored: ApiKeyRecord) => stored.name), [name])
  assert.deepEqual((JSON.parse((await cli(url, ['log', '--json'])).stdout) as KeyEvent[]).map(({ actor, host }) => ({ actor, host })), [audit, { actor: '"quoted"\u2028x', host: 'h\u009b' }])

  // keys rotate names the old key on stderr: one line too.
  const other = await store.createApiKey({ name: 'x\ny', hash: generateApiKey().hash, prefix: 'psk_other___' }, TEST_AUDIT)
  const rotated = await cli(url, ['rotate', String(other.id), '--keep-old-until', '2099-01-01T00:00:00Z'])
  assert.equal(rotated.stderr.split('\n').at(-2), `key ${other.id} ("x\\ny") keeps working until 2099-01-01T00:00:00.000Z; the new key has id ${other.id + 1}`)
})

test(`the trail holds neither a key nor its hash, in its table or in keys log (${STORE_KIND})`, async (t) => {
  const { url, key } = await buildTestApp(t)
  const created = (await cli(url, ['create', '--name', 'ci'])).stdout.trim()
  const rotated = (await cli(url, ['rotate', '2'])).stdout.trim()
  await cli(url, ['revoke', '3'])
  const rows = await sql(url, 'SELECT * FROM key_events ORDER BY id')
  assert.deepEqual(Object.keys(rows[0]!), ['id', 'at', 'change', 'key_id', 'key_prefix', 'key_name', 'scope', 'related_key_id', 'actor', 'host'])
  assert.equal(rows.length, 6)
  const hashes = (await sql(url, 'SELECT hash FROM api_keys')).map((stored) => String(stored.hash))
  assert.deepEqual(hashes.sort(), [key, created, rotated].map(hashApiKey).sort(), 'the hashes looked for are the stored ones')
  const shown = [JSON.stringify(rows, (_, value) => typeof value === 'bigint' ? String(value) : value), (await cli(url, ['log'])).stdout, (await cli(url, ['log', '--json'])).stdout]
  for (const text of shown) {
    for (const secret of [key, created, rotated]) assert.ok(!text.includes(secret.slice('psk_'.length, 20)), 'a key\'s secret is in the trail')
    for (const hash of hashes) assert.ok(!text.includes(hash.slice(0, 16)), 'a key\'s hash is in the trail')
  }
})

test(`the key-events migration on a database made by the migrations before it keeps every key and records what they say (${STORE_KIND})`, async (t) => {
  const { url, store, cleanup } = await createTestStore()
  t.after(cleanup)
  await issueKey(store, 'active')
  const revoked = await issueKey(store, 'revoked')
  await store.revokeApiKey(revoked.id, TEST_AUDIT)
  const rotated = await issueKey(store, 'rotated')
  await store.rotateApiKey(rotated.id, { name: 'rotated', hash: generateApiKey().hash, prefix: 'psk_rotated_' }, '2099-01-01T00:00:00.000Z', new Date().toISOString(), TEST_AUDIT)
  const keys = await store.listApiKeys()
  // As the release before this migration left it.
  const migration = loadMigrations(STORE_KIND).find(({ name }) => name === 'key-events')!
  await sql(url, 'DROP TABLE key_events')
  await sql(url, `DELETE FROM schema_migrations WHERE version = ${migration.version}`)

  const upgraded = await openStore(url)
  t.after(() => upgraded.close())
  assert.deepEqual(await upgraded.migrate(), [`${String(migration.version).padStart(3, '0')}-key-events`])
  assert.deepEqual(await upgraded.listApiKeys(), keys)
  const unknown = { actor: '(not recorded)', host: '(not recorded)' }
  const [active, revokedKey, old, successor] = keys as [ApiKeyRecord, ApiKeyRecord, ApiKeyRecord, ApiKeyRecord]
  const expected = [
    { ...row('create', active, active.createdAt, ''), ...unknown },
    { ...row('create', revokedKey, revokedKey.createdAt, ''), ...unknown },
    { ...row('revoke', revokedKey, revokedKey.revokedAt!, ''), ...unknown },
    { ...row('create', old, old.createdAt, ''), ...unknown },
    { ...row('create', successor, successor.createdAt, '', old.id), ...unknown },
    { ...row('expires', old, '2099-01-01T00:00:00.000Z', ''), ...unknown }
  ]
  const trail = await upgraded.listKeyEvents({})
  const sorted = (events: KeyEvent[]) => [...events].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
  assert.deepEqual(sorted(trail), sorted(expected))
  assert.deepEqual(trail.map((event) => event.at), trail.map((event) => event.at).sort(), 'oldest first')
})
