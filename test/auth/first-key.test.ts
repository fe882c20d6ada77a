import assert from 'node:assert/strict'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureFirstKey } from '../../src/auth/first-key.ts'
import { hashApiKey } from '../../src/auth/api-key.ts'
import type { Store } from '../../src/store/types.ts'
import { logLines, runCli, startServer, stopProcess, tempDir } from '../helpers/processes.ts'

/**
 * The first start's key goes to a file of mode 0600 and nowhere else: never to stdout (the
 * log) or stderr, which container runtimes and log pipelines keep for anyone to read.
 */

const KEY = /psk_[A-Za-z0-9_-]{43}/

const keyNames = async (databaseUrl: string) => {
  const listed = await runCli(['keys', 'list', '--json'], { DATABASE_URL: databaseUrl })
  assert.equal(listed.code, 0, listed.stderr)
  return JSON.parse(listed.stdout).map((key: { name: string }) => key.name)
}

test('the first start writes a working key to a 0600 file and never prints it; a second start leaves the file alone', async (t) => {
  const data = join(tempDir(t), 'data')
  const databaseUrl = `sqlite:${join(data, 'petstore.db')}`
  const file = join(data, 'first-api-key')
  const first = await startServer(t, { DATABASE_URL: databaseUrl })

  const content = readFileSync(file, 'utf8')
  assert.match(content, /^psk_[A-Za-z0-9_-]{43}\n$/)
  const key = content.trim()
  assert.equal((statSync(file).mode & 0o777).toString(8), '600')
  const created = await fetch(`${first.url}/v1/pets`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":7}' })
  assert.equal(created.status, 201)
  await stopProcess(first.child)

  for (const [stream, text] of [['stdout', first.stdout()], ['stderr', first.stderr()]] as const) {
    assert.ok(!text.includes(key.slice(12)), `${stream} never holds the key`)
    assert.doesNotMatch(text, KEY, `${stream} holds nothing that looks like a key`)
  }
  assert.match(first.stderr(), new RegExp(`created the first API key and wrote it to ${file}`))
  const announced = logLines(first).filter((line) => String(line.msg).startsWith('created the first API key'))
  assert.deepEqual(announced.map((line) => [line.file, line.prefix]), [[file, key.slice(0, 12)]])
  // Made by the service itself: the key trail names it, and its log line is the key change's.
  const trail = await runCli(['keys', 'log', '--json'], { DATABASE_URL: databaseUrl })
  const made = JSON.parse(trail.stdout)
  assert.deepEqual(made, [{ at: made[0].at, change: 'create', keyId: 1, prefix: key.slice(0, 12), name: 'first key', scope: 'write', relatedKeyId: null, actor: 'petstore', host: hostname() }])
  const { level, time, pid, hostname: _, msg, file: logged, event, ...fields } = announced[0]!
  assert.deepEqual({ event, ...fields }, { event: 'key_change', ...made[0] })

  const before = statSync(file)
  const second = await startServer(t, { DATABASE_URL: databaseUrl })
  await stopProcess(second.child)
  const after = statSync(file)
  assert.deepEqual([after.ino, after.mtimeMs, after.mode], [before.ino, before.mtimeMs, before.mode], 'the file is untouched')
  assert.equal(readFileSync(file, 'utf8'), content)
  assert.doesNotMatch(second.stderr(), /first API key/)
  assert.deepEqual(await keyNames(databaseUrl), ['first key'])
})

test('an existing first key file is never overwritten: no key is made, and the server serves', async (t) => {
  const dir = tempDir(t)
  const databaseUrl = `sqlite:${join(dir, 'petstore.db')}`
  const file = join(dir, 'first-api-key')
  writeFileSync(file, 'kept\n')
  const server = await startServer(t, { DATABASE_URL: databaseUrl })
  assert.equal((await fetch(`${server.url}/readyz`)).status, 200)
  await stopProcess(server.child)
  assert.equal(readFileSync(file, 'utf8'), 'kept\n')
  assert.match(server.stderr(), /made no first API key: cannot create .*first-api-key \(it already exists, and is never overwritten\); make one with: npm run --silent petstore -- keys create --name NAME/)
  assert.deepEqual(await keyNames(databaseUrl), [])
})

test('a first key file that cannot be written: no key is made, one line says how to make one, and the server serves', async (t) => {
  const dir = tempDir(t)
  const databaseUrl = `sqlite:${join(dir, 'petstore.db')}`
  writeFileSync(join(dir, 'a-file'), 'not a directory')
  // Under a regular file: no directory can be made there, not even by root.
  const file = join(dir, 'a-file', 'first-api-key')
  const server = await startServer(t, { DATABASE_URL: databaseUrl, FIRST_KEY_FILE: file })
  assert.equal((await fetch(`${server.url}/readyz`)).status, 200)
  await stopProcess(server.child)
  const warned = logLines(server).filter((line) => String(line.msg).startsWith('made no first API key'))
  assert.equal(warned.length, 1)
  assert.match(String(warned[0]!.msg), /docker compose run --rm migrate keys create --name admin/)
  assert.equal(server.stderr().split('\n').filter((line) => line.startsWith('made no first API key')).length, 1)
  assert.deepEqual(await keyNames(databaseUrl), [])
})

test('a key the store refuses stays in its file, and the next start stores that key', async (t) => {
  const file = join(tempDir(t), 'first-api-key')
  const stored: string[] = []
  let refuse = true
  const store = {
    underFirstKeyLock: (make: () => Promise<unknown>) => make(),
    countApiKeys: async () => stored.length,
    createApiKey: async ({ hash, prefix }: { hash: string, prefix: string }) => {
      if (refuse) throw new Error('disk I/O error')
      stored.push(hash)
      return { id: 1, name: 'first key', prefix, scope: 'write', createdAt: '2030-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null, expiresAt: null, lineageId: 1, rotatedFrom: null }
    }
  } as unknown as Store
  await assert.rejects(ensureFirstKey(store, file), /disk I\/O error/)
  const key = readFileSync(file, 'utf8').trim()
  assert.match(key, KEY)
  refuse = false
  const event = { at: '2030-01-01T00:00:00.000Z', change: 'create', keyId: 1, prefix: key.slice(0, 12), name: 'first key', scope: 'write', relatedKeyId: null, actor: 'petstore', host: hostname() }
  assert.deepEqual(await ensureFirstKey(store, file), { outcome: 'created', file, prefix: key.slice(0, 12), event })
  assert.deepEqual(stored, [hashApiKey(key)])
  assert.equal(readFileSync(file, 'utf8'), `${key}\n`, 'the file is left as it was')
})
