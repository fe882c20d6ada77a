import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import type { ApiKeyRecord, KeyEvent } from '../../src/store/types.ts'
import { assertError, fetchedReply } from '../helpers/errors.ts'
import { runCli, startServer, tempDir, type CliResult } from '../helpers/processes.ts'

const KEY_LINE = /^(psk_[A-Za-z0-9_-]{43})\n$/
const LIST_HEADER = 'id\tname\tprefix\tscope\tcreated\tlast used\tstate'
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/

/** What a key change wrote on stderr: one JSON line per row of the key trail (test/api/key-trail.test.ts has the fields). */
const changesLogged = (stderr: string) => stderr.trimEnd().split('\n').map((line) => {
  const { event, change, keyId, prefix } = JSON.parse(line)
  return { event, change, keyId, prefix }
})

describe('petstore keys, on the DATABASE_URL of a running server', () => {
  test('create prints the key alone, list never shows it, revoke stops it at once', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    const server = await startServer(t, { DATABASE_URL: databaseUrl })
    const call = (key: string) => fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })

    const created = await runCli(['keys', 'create', '--name', 'deploy-bot'], { DATABASE_URL: databaseUrl })
    assert.equal(created.code, 0)
    const key = KEY_LINE.exec(created.stdout)?.[1]
    assert.ok(key, `stdout is the key and a newline, nothing else: ${JSON.stringify(created.stdout)}`)
    assert.deepEqual(changesLogged(created.stderr), [{ event: 'key_change', change: 'create', keyId: 2, prefix: key.slice(0, 12) }], 'the first key is the server\'s')
    assert.equal((await call(key)).status, 200, 'the running server accepts the new key')

    const listed = await runCli(['keys', 'list'], { DATABASE_URL: databaseUrl })
    assert.equal(listed.code, 0)
    const [header, ...rows] = listed.stdout.trimEnd().split('\n')
    assert.equal(header, LIST_HEADER)
    const row = rows.map((line) => line.split('\t')).find((cells) => cells[1] === 'deploy-bot')
    assert.ok(row, listed.stdout)
    assert.deepEqual(row.map((cell) => cell.replace(ISO, '<time>')), [row[0], 'deploy-bot', `${key.slice(0, 12)}…`, 'write', '<time>', '<time>', 'active'])
    const json = await runCli(['keys', 'list', '--json'], { DATABASE_URL: databaseUrl })
    const records = JSON.parse(json.stdout) as Array<Record<string, unknown>>
    assert.deepEqual(records.map((record) => Object.keys(record)), records.map(() => ['id', 'name', 'prefix', 'scope', 'createdAt', 'lastUsedAt', 'revokedAt', 'expiresAt', 'lineageId', 'rotatedFrom']))
    for (const output of [listed.stdout, json.stdout]) {
      assert.ok(!output.includes(key.slice(12)), 'the secret part of a key is never listed')
    }

    const revoked = await runCli(['keys', 'revoke', row[0]!], { DATABASE_URL: databaseUrl })
    assert.deepEqual({ ...revoked, stderr: changesLogged(revoked.stderr) }, {
      code: 0, stdout: `revoked key ${row[0]}\n`, stderr: [{ event: 'key_change', change: 'revoke', keyId: Number(row[0]), prefix: key.slice(0, 12) }]
    })
    assertError(await fetchedReply(await call(key)), 401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.')
    const after = await runCli(['keys', 'list'], { DATABASE_URL: databaseUrl })
    assert.match(after.stdout, new RegExp(`^${row[0]}\tdeploy-bot\t.*\trevoked ${ISO.source}$`, 'm'))
    const again = await runCli(['keys', 'revoke', row[0]!, '--json'], { DATABASE_URL: databaseUrl })
    const revokedAt = /\trevoked (\S+)$/.exec(after.stdout.split('\n').find((line) => line.startsWith(`${row[0]}\t`))!)![1]
    assert.deepEqual(again, { code: 0, stdout: `{"revoked":${row[0]},"alreadyRevokedAt":"${revokedAt}"}\n`, stderr: '' }, 'revoking twice is not an error')
    assert.deepEqual(await runCli(['keys', 'revoke', row[0]!], { DATABASE_URL: databaseUrl }), {
      code: 0, stdout: `key ${row[0]} was already revoked at ${revokedAt}; nothing changed\n`, stderr: ''
    }, 'a second revoke says on stdout that nothing changed, not "revoked key"')
  })

  test('create --json gives the record and the key, for scripts that want both', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    const created = await runCli(['keys', 'create', '--name', 'ci', '--json'], { DATABASE_URL: databaseUrl })
    assert.equal(created.code, 0)
    const record = JSON.parse(created.stdout)
    assert.match(record.key, /^psk_[A-Za-z0-9_-]{43}$/)
    assert.deepEqual(record, { id: 1, name: 'ci', prefix: record.key.slice(0, 12), scope: 'write', createdAt: record.createdAt, lastUsedAt: null, revokedAt: null, expiresAt: null, lineageId: 1, rotatedFrom: null, key: record.key })
  })

  test('create --scope read issues a read key; list shows each key\'s scope in text and JSON', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    const read = await runCli(['keys', 'create', '--name', 'dashboard', '--scope', 'read'], { DATABASE_URL: databaseUrl })
    assert.deepEqual({ code: read.code, stderr: changesLogged(read.stderr) }, { code: 0, stderr: [{ event: 'key_change', change: 'create', keyId: 1, prefix: read.stdout.slice(0, 12) }] })
    assert.match(read.stdout, KEY_LINE)
    assert.equal((await runCli(['keys', 'create', '--name', 'writer'], { DATABASE_URL: databaseUrl })).code, 0)
    const listed = await runCli(['keys', 'list'], { DATABASE_URL: databaseUrl })
    const rows = listed.stdout.trimEnd().split('\n').slice(1).map((line) => line.split('\t').slice(0, 4))
    assert.deepEqual(rows, [['1', 'dashboard', `${read.stdout.slice(0, 12)}…`, 'read'], ['2', 'writer', rows[1]![2], 'write']])
    const json = JSON.parse((await runCli(['keys', 'list', '--json'], { DATABASE_URL: databaseUrl })).stdout) as Array<{ name: string, scope: string }>
    assert.deepEqual(json.map(({ name, scope }) => ({ name, scope })), [{ name: 'dashboard', scope: 'read' }, { name: 'writer', scope: 'write' }])
  })

  test('list says a rotated key expires before its grace ends and expired after', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    for (const name of ['short', 'long']) assert.equal((await runCli(['keys', 'create', '--name', name], { DATABASE_URL: databaseUrl })).code, 0)
    assert.equal((await runCli(['keys', 'rotate', '1', '--grace', '1s'], { DATABASE_URL: databaseUrl })).code, 0)
    assert.equal((await runCli(['keys', 'rotate', '2', '--grace', '1d'], { DATABASE_URL: databaseUrl })).code, 0)
    await setTimeout(1100)
    const listed = await runCli(['keys', 'list'], { DATABASE_URL: databaseUrl })
    const states = listed.stdout.trimEnd().split('\n').slice(1).map((line) => line.split('\t')).map((cells) => [cells[0], cells[6]!.replace(ISO, '<time>')])
    assert.deepEqual(states, [['1', 'expired <time>'], ['2', 'expires <time>'], ['3', 'active'], ['4', 'active']])
  })
})

describe('petstore commands that only read or change data, on a DATABASE_URL with no petstore database', () => {
  const RUN_MIGRATE_FIRST = 'check it, or start the server or run "npm run --silent petstore -- migrate" first'

  // A mistyped DATABASE_URL must not read a new, empty database ("no keys", "no such key").
  const MISSING: Array<{ args: string[], folder: string }> = [
    { args: ['keys', 'list'], folder: '' },
    { args: ['keys', 'revoke', '1'], folder: 'not-made' },
    { args: ['keys', 'rotate', '1'], folder: '' },
    { args: ['pets', 'export'], folder: 'not-made' }
  ]
  for (const { args, folder } of MISSING) {
    test(`petstore ${args.join(' ')} exits 1 with one line and creates nothing`, async (t) => {
      const path = join(tempDir(t), folder, 'petsore.db')
      const run = await runCli(args, { DATABASE_URL: `sqlite:${path}` })
      assert.deepEqual(run, {
        code: 1,
        stdout: '',
        stderr: `petstore ${args.slice(0, 2).join(' ')}: DATABASE_URL sqlite:${path} names no database (no file at ${resolve(path)}): ${RUN_MIGRATE_FIRST}\n`
      })
      assert.equal(existsSync(path), false, 'the database file was created')
      if (folder) assert.equal(existsSync(join(path, '..')), false, 'the folder of the database file was created')
    })
  }

  test('keys list and keys revoke on a SQLite file that was never migrated exit 1 with one line, and migrate nothing', async (t) => {
    const path = join(tempDir(t), 'petstore.db')
    new DatabaseSync(path).close()
    for (const args of [['keys', 'list'], ['keys', 'revoke', '1']]) {
      assert.deepEqual(await runCli(args, { DATABASE_URL: `sqlite:${path}` }), {
        code: 1,
        stdout: '',
        stderr: `petstore ${args.slice(0, 2).join(' ')}: DATABASE_URL sqlite:${path} is not a migrated petstore database (no such table: schema_migrations): ${RUN_MIGRATE_FIRST}\n`
      })
    }
    const db = new DatabaseSync(path)
    t.after(() => db.close())
    assert.deepEqual(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all(), [], 'no table was created')
  })
})

describe('petstore with bad arguments', () => {
  const usage = (command: string) => `Usage: npm run --silent petstore -- ${command}\n`
  const CREATE_USAGE = 'keys create --name NAME [--scope read|write] [--actor NAME] [--json]'
  const REVOKE_USAGE = 'keys revoke ID [--actor NAME] [--json]'
  const CASES: Array<{ args: string[], code: number, stderr: string | RegExp }> = [
    { args: ['feed'], code: 2, stderr: 'petstore: unknown command "feed"\nsee: npm run --silent petstore -- --help\n' },
    { args: ['mgirate'], code: 2, stderr: 'petstore: unknown command "mgirate" (did you mean migrate?)\nsee: npm run --silent petstore -- --help\n' },
    { args: ['keys', 'create'], code: 2, stderr: 'petstore keys create: --name NAME is required (1 to 100 characters)\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--name', '  '], code: 2, stderr: 'petstore keys create: --name NAME is required (1 to 100 characters)\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--name', 'bot', 'extra'], code: 2, stderr: 'petstore keys create: unexpected argument "extra"\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--nmae', 'bot'], code: 2, stderr: 'petstore keys create: Unknown option \'--nmae\' (did you mean --name?)\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--name'], code: 2, stderr: 'petstore keys create: Option \'--name <NAME>\' argument missing\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--name', 'bot', '--scope', 'admin'], code: 2, stderr: 'petstore keys create: --scope needs read or write; got "admin"\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--name', 'bot', '--scope', 'READ'], code: 2, stderr: 'petstore keys create: --scope needs read or write; got "READ"\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'create', '--name', 'bot', '--scope'], code: 2, stderr: 'petstore keys create: Option \'--scope <SCOPE>\' argument missing\n' + usage(CREATE_USAGE) },
    { args: ['keys', 'revoke', '1', '2'], code: 2, stderr: 'petstore keys revoke: unexpected argument "2"\n' + usage(REVOKE_USAGE) },
    { args: ['keys'], code: 2, stderr: /^Usage: npm run --silent petstore -- keys <command> \[options\]\n[^]*\n {2}keys revoke ID \[--actor NAME\] \[--json\]\n[^]*\n {2}keys log \[--since TIME\] \[--key ID\] \[--json\]\n/ },
    { args: ['keys', 'feed'], code: 2, stderr: 'petstore: unknown command "keys feed"\nsee: npm run --silent petstore -- keys --help\n' },
    { args: ['keys', 'list', 'all'], code: 2, stderr: 'petstore keys list: unexpected argument "all"\n' + usage('keys list [--json]') },
    { args: ['keys', 'revoke'], code: 2, stderr: 'petstore keys revoke: expected a key id (a positive whole number), got ""\n' + usage(REVOKE_USAGE) },
    { args: ['keys', 'revoke', 'abc'], code: 2, stderr: 'petstore keys revoke: expected a key id (a positive whole number), got "abc"\n' + usage(REVOKE_USAGE) },
    { args: ['keys', 'revoke', '99'], code: 1, stderr: 'petstore keys revoke: no key has id 99\n' }
  ]

  test('exit 2 with a message and the usage on stderr (1 when the operation itself fails), and write nothing to stdout', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    // keys revoke needs a database to look the id up in.
    assert.equal((await runCli(['migrate'], { DATABASE_URL: databaseUrl })).code, 0)
    // Two at a time: each is a whole Node process, and the machine is shared.
    const runs: CliResult[] = []
    for (let i = 0; i < CASES.length; i += 2) {
      runs.push(...await Promise.all(CASES.slice(i, i + 2).map(({ args }) => runCli([...args], { DATABASE_URL: databaseUrl }))))
    }
    for (const [index, { args, code, stderr }] of CASES.entries()) {
      await t.test(`petstore ${args.join(' ')}`, () => {
        const run = runs[index]!
        assert.equal(run.code, code, run.stderr)
        if (typeof stderr === 'string') assert.equal(run.stderr, stderr)
        else assert.match(run.stderr, stderr)
        assert.equal(run.stdout, '')
      })
    }
  })

  test('a --name or --actor holding a line break, tab, escape, line separator or bidirectional control exits 2 with one line naming it escaped, and changes nothing', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    assert.equal((await runCli(['keys', 'create', '--name', 'ci'], { DATABASE_URL: databaseUrl })).code, 0)
    const refused = (option: string, escaped: string) => `${option} must not hold control characters (line breaks, tabs, escapes), line or paragraph separators, or bidirectional controls; got "${escaped}"`
    const CASES: Array<{ args: string[], stderr: string }> = [
      // A key 9 that does not exist, on a row of its own in keys list.
      { args: ['keys', 'create', '--name', 'ops\n9\tforged\tpsk_forged…\twrite'], stderr: `petstore keys create: ${refused('--name NAME', 'ops\\n9\\tforged\\tpsk_forged…\\twrite')}\n${usage(CREATE_USAGE)}` },
      // A revoke by mallory that never happened, on a row of its own in keys log.
      { args: ['keys', 'create', '--name', 'ci', '--actor', 'alice\n2030-01-01T00:00:00.000Z\trevoke\t1\tpsk_abc…\tci\twrite\tmallory'], stderr: `petstore keys create: ${refused('--actor NAME', 'alice\\n2030-01-01T00:00:00.000Z\\trevoke\\t1\\tpsk_abc…\\tci\\twrite\\tmallory')}\n${usage(CREATE_USAGE)}` },
      { args: ['keys', 'revoke', '1', '--actor', 'alice\u001b[1A\u009b2K'], stderr: `petstore keys revoke: ${refused('--actor NAME', 'alice\\u001b[1A\\u009b2K')}\n${usage(REVOKE_USAGE)}` },
      { args: ['keys', 'rotate', '1', '--actor', 'alice\u2028bob'], stderr: `petstore keys rotate: ${refused('--actor NAME', 'alice\\u2028bob')}\n${usage('keys rotate ID [--keep-old-until ISO | --grace DURATION] [--actor NAME] [--json]')}` },
      { args: ['keys', 'create', '--name', 'ci\u202eetirw'], stderr: `petstore keys create: ${refused('--name NAME', 'ci\\u202eetirw')}\n${usage(CREATE_USAGE)}` }
    ]
    for (const { args, stderr } of CASES) {
      assert.deepEqual(await runCli(args, { DATABASE_URL: databaseUrl }), { code: 2, stdout: '', stderr }, JSON.stringify(args))
    }
    const listed = await runCli(['keys', 'list', '--json'], { DATABASE_URL: databaseUrl })
    const log = await runCli(['keys', 'log', '--json'], { DATABASE_URL: databaseUrl })
    assert.deepEqual(JSON.parse(listed.stdout).map(({ id, name, revokedAt, expiresAt }: ApiKeyRecord) => ({ id, name, revokedAt, expiresAt })), [{ id: 1, name: 'ci', revokedAt: null, expiresAt: null }])
    assert.deepEqual(JSON.parse(log.stdout).map(({ change, keyId }: KeyEvent) => `${change} ${keyId}`), ['create 1'], 'a refused command writes no row')
  })

  test('--help after a command prints its usage, summary and options on stdout and exits 0', async (t) => {
    const run = await runCli(['keys', 'create', '--help'], { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}` })
    assert.deepEqual({ code: run.code, stderr: run.stderr }, { code: 0, stderr: '' })
    assert.match(run.stdout, /^Usage: npm run --silent petstore -- keys create --name NAME \[--scope read\|write\] \[--actor NAME\] \[--json\]\n\nIssue an API key\. .*\n\nOptions:\n {2}--name <NAME>\n {6}what the key is for, 1 to 100 characters\n/)
  })

  test('with no arguments prints the help on stdout and exits 2', async (t) => {
    const run = await runCli([], { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}` })
    assert.equal(run.code, 2)
    assert.match(run.stdout, /^Usage: npm run --silent petstore -- <command> \[options\]\n/)
    assert.match(run.stdout, /keys create --name NAME/)
  })
})

describe('petstore --version, and failures under --json', () => {
  test('--version and -V print the version of package.json alone on stdout and exit 0', async (t) => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    assert.match(version, /^\d+\.\d+\.\d+/)
    const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'petstore.db')}` }
    for (const flag of ['--version', '-V']) assert.deepEqual(await runCli([flag], env), { code: 0, stdout: `${version}\n`, stderr: '' })
  })

  test('under --json a failing command prints {"error":{"code","message"}} on stdout, keeps its line on stderr, and exits 1 or 2', async (t) => {
    const folder = tempDir(t)
    const databaseUrl = `sqlite:${join(folder, 'petstore.db')}`
    const missing = join(folder, 'missing.db')
    assert.equal((await runCli(['migrate'], { DATABASE_URL: databaseUrl })).code, 0)
    const CASES: Array<{ args: string[], code: number, error: { code: string, message: string }, env?: string }> = [
      { args: ['keys', 'revoke', '99', '--json'], code: 1, error: { code: 'failed', message: 'no key has id 99' } },
      { args: ['keys', 'revoke', 'abc', '--json'], code: 2, error: { code: 'usage', message: 'expected a key id (a positive whole number), got "abc"' } },
      { args: ['migrate', '--json', 'now'], code: 2, error: { code: 'usage', message: 'unexpected argument "now"' } },
      { args: ['pets', 'export', '--json'], code: 2, error: { code: 'usage', message: 'Unknown option \'--json\'' } },
      { args: ['feed', '--json'], code: 2, error: { code: 'usage', message: 'unknown command "feed"' } },
      { args: ['pets', 'import', '--json'], code: 2, error: { code: 'usage', message: 'expected the file to import (FILE.jsonl, or - for stdin)' } },
      { args: ['pets', 'import', folder, '--json'], code: 1, error: { code: 'cannot_read', message: `${folder} is a directory, not a JSON Lines file` } },
      {
        args: ['keys', 'list', '--json'],
        code: 1,
        env: `sqlite:${missing}`,
        error: { code: 'no_database', message: `DATABASE_URL sqlite:${missing} names no database (no file at ${missing}): check it, or start the server or run "npm run --silent petstore -- migrate" first` }
      }
    ]
    const runs: CliResult[] = []
    for (let i = 0; i < CASES.length; i += 2) {
      runs.push(...await Promise.all(CASES.slice(i, i + 2).map(({ args, env }) => runCli(args, { DATABASE_URL: env ?? databaseUrl }))))
    }
    for (const [index, { args, code, error }] of CASES.entries()) {
      await t.test(`petstore ${args.join(' ')}`, () => {
        const run = runs[index]!
        assert.equal(run.code, code, run.stderr)
        assert.equal(run.stdout, JSON.stringify({ error }) + '\n')
        assert.ok(run.stderr.includes(`: ${error.message}\n`), run.stderr)
      })
    }
  })
})
