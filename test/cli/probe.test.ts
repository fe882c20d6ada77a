import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import { runCli, startServer, tempDir, type CliResult } from '../helpers/processes.ts'

const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT'
const SKIPPED = 'createPet failed'
const UNAUTHORIZED_MESSAGE = 'A valid API key is required: send Authorization: Bearer <key>.'

/** A server process on a fresh SQLite file, and a key for it. */
async function serverWithKey (t: TestContext): Promise<{ baseUrl: string, key: string }> {
  const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
  const created = await runCli(['keys', 'create', '--name', 'probe'], { DATABASE_URL: databaseUrl })
  assert.equal(created.code, 0, created.stderr)
  const server = await startServer(t, { DATABASE_URL: databaseUrl })
  return { baseUrl: `${server.url}/v1`, key: created.stdout.trim() }
}

/** The text output with each check's time as <ms>, and request ids as <id>. */
const lines = (run: CliResult) => run.stdout.trimEnd().split('\n')
  .map((line) => line.slice(0, 24) + line.slice(24).replace(/^ *\d+ ms {2}/, '<ms>  ').replace(/request id [\w-]+/, 'request id <id>'))

async function listen (t: TestContext, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { if (server.listening) server.close() })
  return (server.address() as { port: number }).port
}

describe('petstore probe BASE_URL, the key in PETSTORE_KEY or --key-file', () => {
  test('against a running server every check passes and it exits 0, in text and in --json', async (t) => {
    const { baseUrl, key } = await serverWithKey(t)

    const text = await runCli(['probe', baseUrl], { PETSTORE_KEY: key })
    assert.equal(text.code, 0, text.stdout + text.stderr)
    assert.deepEqual(lines(text), [
      'ok    createPet         <ms>  201, id 1',
      'ok    createPet replay  <ms>  201, the same pet, Idempotent-Replayed: true',
      'ok    listPets          <ms>  200, the new pet listed with status=sold',
      `ok    getPet            <ms>  200, deprecated, Sunset: ${SUNSET}`,
      'ok    unauthorized      <ms>  401 unauthorized without a key, with the Error body',
      'ok    not found         <ms>  404 not_found for an id never assigned, with the Error body'
    ])
    assert.equal(text.stderr, `all 6 checks passed on ${baseUrl}\n`)

    // A trailing slash is the same base address; the second run makes the second pet.
    const json = await runCli(['probe', `${baseUrl}/`, '--json'], { PETSTORE_KEY: key })
    assert.deepEqual({ code: json.code, stderr: json.stderr }, { code: 0, stderr: '' })
    const report = JSON.parse(json.stdout) as { ok: boolean, checks: Array<{ ms: unknown }> }
    assert.ok(report.checks.every(({ ms }) => Number.isInteger(ms)), json.stdout)
    assert.deepEqual({ ...report, checks: report.checks.map((check) => ({ ...check, ms: 0 })) }, {
      ok: true,
      checks: [
        { name: 'createPet', ok: true, ms: 0, detail: '201, id 2' },
        { name: 'createPet replay', ok: true, ms: 0, detail: '201, the same pet, Idempotent-Replayed: true' },
        { name: 'listPets', ok: true, ms: 0, detail: '200, the new pet listed with status=sold' },
        { name: 'getPet', ok: true, ms: 0, detail: `200, deprecated, Sunset: ${SUNSET}` },
        { name: 'unauthorized', ok: true, ms: 0, detail: '401 unauthorized without a key, with the Error body' },
        { name: 'not found', ok: true, ms: 0, detail: '404 not_found for an id never assigned, with the Error body' }
      ]
    })
  })

  test('--read-only with a read key lists, gets the first pet listed (skipped while there is none) and is refused twice, and creates nothing', async (t) => {
    const databaseUrl = `sqlite:${join(tempDir(t), 'petstore.db')}`
    const keyOf = async (scope: string) => (await runCli(['keys', 'create', '--name', scope, '--scope', scope], { DATABASE_URL: databaseUrl })).stdout.trim()
    const [readKey, writeKey] = [await keyOf('read'), await keyOf('write')]
    const server = await startServer(t, { DATABASE_URL: databaseUrl })
    const baseUrl = `${server.url}/v1`
    const refusals = [
      'ok    unauthorized      <ms>  401 unauthorized without a key, with the Error body',
      'ok    not found         <ms>  404 not_found for an id never assigned, with the Error body'
    ]

    const empty = await runCli(['probe', baseUrl, '--read-only'], { PETSTORE_KEY: readKey })
    assert.equal(empty.code, 0, empty.stdout + empty.stderr)
    assert.deepEqual(lines(empty), ['ok    listPets          <ms>  200, no pets yet', 'skip  getPet                 -     the listing is empty', ...refusals])
    assert.equal(empty.stderr, `3 of 4 checks passed; 1 skipped: getPet, on ${baseUrl}\n`)

    const pets = (key: string) => fetch(`${baseUrl}/pets`, { headers: { authorization: `Bearer ${key}` } }).then((reply) => reply.json())
    const rex = await fetch(`${baseUrl}/pets`, { method: 'POST', headers: { authorization: `Bearer ${writeKey}`, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":7}' })
    assert.equal(rex.status, 201)
    for (let run = 0; run < 2; run++) {
      const listed = await runCli(['probe', baseUrl, '--read-only'], { PETSTORE_KEY: readKey })
      assert.equal(listed.code, 0, listed.stdout + listed.stderr)
      assert.deepEqual(lines(listed), ['ok    listPets          <ms>  200, first pet id 1', `ok    getPet            <ms>  200, the listed pet, deprecated, Sunset: ${SUNSET}`, ...refusals])
    }
    assert.deepEqual(await pets(writeKey), [{ id: 1, name: 'Rex', categoryId: 7 }], 'three read-only runs added no pet')
  })

  test('with a key the server does not know it exits 1, names the checks that failed and why, and skips those that needed them', async (t) => {
    const { baseUrl } = await serverWithKey(t)
    const run = await runCli(['probe', baseUrl], { PETSTORE_KEY: 'psk_not-a-key-of-this-server' })
    assert.equal(run.code, 1)
    const refused = `expected 201, got 401 unauthorized: ${UNAUTHORIZED_MESSAGE} (request id <id>)`
    assert.deepEqual(lines(run), [
      `FAIL  createPet         <ms>  ${refused}`,
      `skip  createPet replay       -     ${SKIPPED}`,
      `skip  listPets               -     ${SKIPPED}`,
      `skip  getPet                 -     ${SKIPPED}`,
      'ok    unauthorized      <ms>  401 unauthorized without a key, with the Error body',
      `FAIL  not found         <ms>  expected 404 not_found, got 401 unauthorized: ${UNAUTHORIZED_MESSAGE} (request id <id>)`
    ])
    assert.equal(run.stderr, 'petstore probe: 2 of 6 checks failed: createPet, not found; 3 skipped: createPet replay, listPets, getPet\n')

    // --read-only: getPet needs the listing, so it is skipped, never passed, when listPets fails.
    const readOnly = await runCli(['probe', baseUrl, '--read-only'], { PETSTORE_KEY: 'psk_not-a-key-of-this-server' })
    assert.equal(readOnly.code, 1)
    assert.deepEqual(lines(readOnly), [
      `FAIL  listPets          <ms>  expected 200, got 401 unauthorized: ${UNAUTHORIZED_MESSAGE} (request id <id>)`,
      'skip  getPet                 -     listPets failed',
      'ok    unauthorized      <ms>  401 unauthorized without a key, with the Error body',
      `FAIL  not found         <ms>  expected 404 not_found, got 401 unauthorized: ${UNAUTHORIZED_MESSAGE} (request id <id>)`
    ])
    assert.equal(readOnly.stderr, 'petstore probe: 2 of 4 checks failed: listPets, not found; 1 skipped: getPet\n')
  })

  test('against a closed port it exits 1, every check failing with cannot connect or skipped for want of the pet, also in --json', async (t) => {
    // A port that was free a moment ago: nothing listens there now.
    const closed = createServer()
    const closedPort = await listen(t, closed)
    await new Promise((resolve) => closed.close(resolve))
    const baseUrl = `http://127.0.0.1:${closedPort}/v1`
    const run = await runCli(['probe', baseUrl, '--json'], { PETSTORE_KEY: 'psk_any' })
    assert.equal(run.code, 1)
    const refused = (path: string, method = 'GET') => `${method} ${baseUrl}${path}: cannot connect (ECONNREFUSED)`
    const { error, ...report } = JSON.parse(run.stdout) as { ok: boolean, checks: Array<{ ms: unknown }>, error: { code: string } }
    assert.equal(error.code, 'failed')
    assert.deepEqual({ ...report, checks: report.checks.map((check) => ({ ...check, ms: 0 })) }, {
      ok: false,
      checks: [
        { name: 'createPet', ok: false, ms: 0, detail: refused('/pets', 'POST') },
        { name: 'createPet replay', ok: false, skipped: true, ms: 0, detail: SKIPPED },
        { name: 'listPets', ok: false, skipped: true, ms: 0, detail: SKIPPED },
        { name: 'getPet', ok: false, skipped: true, ms: 0, detail: SKIPPED },
        { name: 'unauthorized', ok: false, ms: 0, detail: refused('/pets') },
        { name: 'not found', ok: false, ms: 0, detail: refused('/pets/9223372036854775807') }
      ]
    })
    assert.equal(run.stderr, 'petstore probe: 3 of 6 checks failed: createPet, unauthorized, not found; 3 skipped: createPet replay, listPets, getPet\n')
  })

  test('behind a hop whose listings miss the new pet, listPets fails and the rest pass', async (t) => {
    const { baseUrl, key } = await serverWithKey(t)
    // A stale cache or replica in front: listings get [], everything else passes through.
    const stale = createServer((request, response) => {
      const stalePath = request.method === 'GET' && /^\/v1\/pets\?/.test(request.url ?? '')
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', async () => {
        const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => ['authorization', 'content-type', 'idempotency-key'].includes(name))) as Record<string, string>
        const upstream = await fetch(baseUrl.replace(/\/v1$/, '') + request.url, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        const body = stalePath && upstream.status === 200 ? '[]' : await upstream.text()
        const passed = [...upstream.headers].filter(([name]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name))
        response.writeHead(upstream.status, Object.fromEntries(passed)).end(body)
      })
    })
    const port = await listen(t, stale)
    const run = await runCli(['probe', `http://127.0.0.1:${port}/v1`], { PETSTORE_KEY: key })
    assert.equal(run.code, 1)
    assert.equal(lines(run)[2], 'FAIL  listPets          <ms>  the new pet is not listed: got "[]"')
    assert.deepEqual(lines(run).map((line) => line.slice(0, 24)), [
      'ok    createPet         ', 'ok    createPet replay  ', 'FAIL  listPets          ', 'ok    getPet            ', 'ok    unauthorized      ', 'ok    not found         '
    ])
    assert.equal(run.stderr, 'petstore probe: 1 of 6 checks failed: listPets\n')
  })

  test('takes the key from --key-file before PETSTORE_KEY, and still from --key; an unreadable or empty key file exits 1', async (t) => {
    const { baseUrl, key } = await serverWithKey(t)
    const folder = tempDir(t)
    const keyFile = join(folder, 'key')
    // As `keys create > FILE` writes it: the key and a line end.
    writeFileSync(keyFile, `${key}\n`)
    const fromFile = await runCli(['probe', baseUrl, '--key-file', keyFile], { PETSTORE_KEY: 'psk_not-a-key-of-this-server' })
    assert.equal(fromFile.code, 0, fromFile.stdout + fromFile.stderr)
    assert.equal(lines(fromFile)[0], 'ok    createPet         <ms>  201, id 1')
    const fromFlag = await runCli(['probe', baseUrl, '--key', key], { PETSTORE_KEY: '' })
    assert.equal(fromFlag.code, 0, fromFlag.stdout + fromFlag.stderr)
    assert.equal(lines(fromFlag)[0], 'ok    createPet         <ms>  201, id 2')

    const missing = join(folder, 'missing', 'key')
    const empty = join(folder, 'empty')
    writeFileSync(empty, '\n')
    assert.deepEqual(await runCli(['probe', baseUrl, '--key-file', missing, '--json'], { PETSTORE_KEY: key }), {
      code: 1,
      stdout: `{"error":{"code":"cannot_read","message":"cannot read the key file ${missing}: no such file"}}\n`,
      stderr: `petstore probe: cannot read the key file ${missing}: no such file\n`
    })
    assert.deepEqual(await runCli(['probe', baseUrl, '--key-file', empty], {}), { code: 1, stdout: '', stderr: `petstore probe: the key file ${empty} holds no key on its first line\n` })
  })

  test('exits 2 with the message and the usage when the command line is wrong', async () => {
    const usage = 'Usage: npm run --silent petstore -- probe BASE_URL [--read-only] [--key-file FILE] [--json] [--timeout MS]\n'
    const cases: Array<{ args: string[], message: string }> = [
      { args: ['probe'], message: 'expected the base address, ending in /v1 (https://api.example.com/v1); got ""' },
      { args: ['probe', 'http://127.0.0.1:8080', '--key', 'k'], message: 'expected the base address, ending in /v1 (https://api.example.com/v1); got "http://127.0.0.1:8080"' },
      { args: ['probe', 'ftp://127.0.0.1/v1', '--key', 'k'], message: 'expected the base address, ending in /v1 (https://api.example.com/v1); got "ftp://127.0.0.1/v1"' },
      { args: ['probe', 'http://127.0.0.1:8080/v1'], message: 'no API key: set PETSTORE_KEY or give --key-file FILE' },
      { args: ['probe', 'http://127.0.0.1:8080/v1', '--key-file', 'k.txt', '--key', 'k'], message: 'give the key one way: --key-file or --key, not both' },
      { args: ['probe', 'http://127.0.0.1:8080/v1', '--key', 'k', '--timeout', '5s'], message: '--timeout needs a whole number of milliseconds from 1 to 9999999; got "5s"' }
    ]
    // Two at a time: each is a whole Node process, and the machine is shared.
    for (let i = 0; i < cases.length; i += 2) {
      const pair = cases.slice(i, i + 2)
      // PETSTORE_KEY emptied: one in the environment the tests run in is not the key these lines give.
      const runs = await Promise.all(pair.map(({ args }) => runCli(args, { PETSTORE_KEY: '' })))
      for (const [j, { args, message }] of pair.entries()) {
        assert.deepEqual(runs[j], { code: 2, stdout: '', stderr: `petstore probe: ${message}\n${usage}` }, args.join(' '))
      }
    }
  })
})
