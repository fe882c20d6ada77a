import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { size } from '../../src/cli/backup-files.ts'
import { loadMigrations } from '../../src/store/migrations.ts'
import { assertError, fetchedReply } from '../helpers/errors.ts'
import { runCli, startServer, stopProcess, tempDir } from '../helpers/processes.ts'

/**
 * petstore backup and restore on SQLite, end to end: a real server writing while the backup
 * runs, the copy read back with SQLite itself, and the restored database served again.
 */

interface Pet { id: number, name: string, categoryId: number, status?: string }

const LATEST = loadMigrations('sqlite').at(-1)!.version
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8)

/** The pets of a SQLite file as the API writes them, by id. */
function petsIn (file: string): Map<number, Pet> {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    const rows = db.prepare('SELECT id, name, category_id, status FROM pets ORDER BY id').all()
    return new Map(rows.map((row) => [Number(row.id), {
      id: Number(row.id),
      name: String(row.name),
      categoryId: Number(row.category_id),
      ...(row.status !== null && { status: String(row.status) })
    }]))
  } finally {
    db.close()
  }
}

function integrityOf (file: string): unknown {
  const db = new DatabaseSync(file, { readOnly: true })
  try { return db.prepare('PRAGMA integrity_check').all().map((row) => ({ ...row })) } finally { db.close() }
}

/** A migrated database with `pets` pets, made by the CLI alone. */
async function seededDatabase (dir: string, pets: number): Promise<string> {
  const url = `sqlite:${join(dir, 'data', 'petstore.db')}`
  const lines = join(dir, 'pets.jsonl')
  writeFileSync(lines, Array.from({ length: pets }, (_, i) => JSON.stringify({ name: `seed ${i}`, categoryId: i })).join('\n'))
  const imported = await runCli(['pets', 'import', lines], { DATABASE_URL: url })
  assert.equal(imported.code, 0, imported.stderr)
  return url
}

test('backup while pets are written holds every pet acknowledged before it started, in a 0600 file in a new 0700 folder that passes integrity_check; restore is refused while the server runs, and after a stop gives that data back', async (t) => {
  const dir = tempDir(t)
  const database = join(dir, 'data', 'petstore.db')
  const url = `sqlite:${database}`
  const env = { DATABASE_URL: url }
  const server = await startServer(t, env)
  const key = readFileSync(join(dir, 'data', 'first-api-key'), 'utf8').trim()
  const acknowledged = new Map<number, Pet>()
  const create = async (name: string, categoryId: number) => {
    const reply = await fetch(`${server.url}/v1/pets`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, categoryId, status: 'available' }) })
    assert.equal(reply.status, 201)
    const pet = await reply.json() as Pet
    acknowledged.set(pet.id, pet)
  }
  for (let i = 0; i < 50; i++) await create(`before ${i}`, i)

  // Four clients write from before the backup starts until after it ends.
  const load = { writing: true, sent: 0 }
  const writers = Array.from({ length: 4 }, async (_, writer) => {
    while (load.writing) await create(`during ${writer}-${load.sent}`, load.sent++)
  })
  while (acknowledged.size < 70) await new Promise((resolve) => setImmediate(resolve))
  const beforeBackup = new Map(acknowledged)
  const file = join(dir, 'backups', 'daily', 'petstore.db')
  const backedUp = await runCli(['backup', file], env)
  load.writing = false
  await Promise.all(writers)

  const copy = petsIn(file)
  assert.deepEqual(backedUp, {
    code: 0,
    stdout: `backed up ${url} to ${file} (${size(statSync(file).size)}, mode 0600): ${copy.size} pets, 1 key, migration ${LATEST}; integrity_check ok\n`,
    stderr: ''
  })
  assert.deepEqual([modeOf(file), modeOf(join(dir, 'backups')), modeOf(join(dir, 'backups', 'daily'))], ['600', '700', '700'])
  assert.deepEqual(readdirSync(join(dir, 'backups', 'daily')), ['petstore.db'], 'no partial file is left beside it')
  assert.deepEqual(integrityOf(file), [{ integrity_check: 'ok' }])
  for (const pet of beforeBackup.values()) assert.deepEqual(copy.get(pet.id), pet, `pet ${pet.id}, acknowledged before the backup started`)
  for (const pet of copy.values()) assert.deepEqual(pet, acknowledged.get(pet.id), 'every pet of the copy is one the server acknowledged, as acknowledged')
  const later = [...acknowledged.values()].find((pet) => !copy.has(pet.id))
  assert.ok(later, 'some pets were acknowledged after the copy was taken')

  const refused = await runCli(['restore', file], env)
  assert.deepEqual(refused, {
    code: 1,
    stdout: '',
    stderr: `petstore restore: DATABASE_URL ${url} is open in another process (the service, or another command): stop it, then restore again; nothing was changed\n`
  })
  const stillServed = await fetch(`${server.url}/v1/pets/${later.id}`, { headers: { authorization: `Bearer ${key}` } })
  assert.deepEqual([stillServed.status, await stillServed.json()], [200, later])

  await stopProcess(server.child)
  const restored = await runCli(['restore', file], env)
  const keptAt = /the database it replaced is kept at (\S+) /.exec(restored.stdout)?.[1] ?? ''
  assert.deepEqual(restored, {
    code: 0,
    stdout: `restored ${url} from ${file}: ${copy.size} pets, 1 key, migration ${LATEST}; the database it replaced is kept at ${keptAt} (mode 0600)\n`,
    stderr: ''
  })
  assert.match(keptAt, new RegExp(`^${database}\\.before-restore-\\d{8}T\\d{6}Z$`))
  assert.equal(modeOf(keptAt), '600')
  assert.deepEqual([...petsIn(keptAt).values()], [...acknowledged.values()].sort((a, b) => a.id - b.id), 'the replaced database, kept aside, holds every acknowledged pet')
  assert.deepEqual(readdirSync(join(dir, 'data')).sort(), ['first-api-key', 'petstore.db', keptAt.slice(keptAt.lastIndexOf('/') + 1)])

  const again = await startServer(t, env)
  const exported = await runCli(['pets', 'export'], env)
  assert.equal(exported.code, 0, exported.stderr)
  assert.deepEqual(exported.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)), [...copy.values()])
  const gone = await fetch(`${again.url}/v1/pets/${later.id}`, { headers: { authorization: `Bearer ${key}` } })
  assertError(await fetchedReply(gone), 404, 'not_found', `No pet has id ${later.id}.`, { label: 'a pet created after the backup is gone' })
})

test('backup refuses an existing FILE and leaves it alone; --force replaces it with a 0600 copy, also over a 0644 file', async (t) => {
  const dir = tempDir(t)
  const url = await seededDatabase(dir, 3)
  const file = join(dir, 'petstore-backup.db')
  writeFileSync(file, 'an older backup\n', { mode: 0o644 })
  const before = statSync(file)

  const refused = await runCli(['backup', file], { DATABASE_URL: url })
  assert.deepEqual(refused, { code: 1, stdout: '', stderr: `petstore backup: ${file} already exists: choose another name, or add --force to replace it\n` })
  assert.deepEqual([readFileSync(file, 'utf8'), statSync(file).mtimeMs, modeOf(file)], ['an older backup\n', before.mtimeMs, '644'])

  const forced = await runCli(['backup', file, '--force', '--json'], { DATABASE_URL: url })
  assert.deepEqual({ ...forced, stdout: JSON.parse(forced.stdout) }, {
    code: 0,
    stdout: { file, bytes: statSync(file).size, migration: LATEST, pets: 3, keys: 0, database: url },
    stderr: ''
  })
  assert.equal(modeOf(file), '600')
  assert.deepEqual([...petsIn(file).values()].map((pet) => pet.name), ['seed 0', 'seed 1', 'seed 2'])
  assert.deepEqual(readdirSync(dir).sort(), ['data', 'pets.jsonl', 'petstore-backup.db'])
})

test('restore refuses, changing nothing, a backup ahead of this release, a file that is not SQLite, and the database itself; with no database yet it makes one', async (t) => {
  const dir = tempDir(t)
  const url = await seededDatabase(dir, 2)
  const env = { DATABASE_URL: url }
  const database = url.slice('sqlite:'.length)
  const ahead = join(dir, 'ahead.db')
  assert.equal((await runCli(['backup', ahead], env)).code, 0)
  const db = new DatabaseSync(ahead)
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST + 1, 'from-the-future', new Date().toISOString())
  db.close()
  const garbage = join(dir, 'garbage.db')
  writeFileSync(garbage, 'x'.repeat(4096))

  const refusals = [
    [ahead, 1, `${ahead} is at migration ${LATEST + 1}, ahead of this release's ${LATEST}: restore it with the release that wrote it`],
    [garbage, 1, `${garbage} cannot be read as a SQLite database: file is not a database`],
    [database, 2, `${database} is the database of DATABASE_URL itself: name another file`]
  ] as const
  for (const [file, code, message] of refusals) {
    const refused = await runCli(['restore', file], env)
    const usage = code === 2 ? 'Usage: npm run --silent petstore -- restore FILE [--json]\n' : ''
    assert.deepEqual(refused, { code, stdout: '', stderr: `petstore restore: ${message}\n${usage}` })
  }
  assert.deepEqual(readdirSync(join(dir, 'data')), ['petstore.db'], 'nothing was put aside')
  assert.deepEqual([...petsIn(database).values()].map((pet) => pet.name), ['seed 0', 'seed 1'])

  const fresh = join(dir, 'elsewhere', 'petstore.db')
  const made = await runCli(['restore', ahead], { DATABASE_URL: `sqlite:${fresh}` })
  assert.equal(made.code, 1, 'the backup ahead is refused for a new database too')
  const good = join(dir, 'good.db')
  assert.equal((await runCli(['backup', good], env)).code, 0)
  const restored = await runCli(['restore', good], { DATABASE_URL: `sqlite:${fresh}` })
  assert.deepEqual(restored, { code: 0, stdout: `restored sqlite:${fresh} from ${good}: 2 pets, 0 keys, migration ${LATEST}; there was no database to keep\n`, stderr: '' })
  assert.deepEqual([modeOf(fresh), modeOf(join(dir, 'elsewhere'))], ['600', '700'])
  assert.deepEqual([...petsIn(fresh).values()], [...petsIn(database).values()])
})
