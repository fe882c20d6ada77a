import assert from 'node:assert/strict'
import { fstatSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { StoreUnavailableError } from '../../src/store/store-errors.ts'
import { GroupCommit } from '../../src/store/sqlite/group-commit.ts'
import { openStore } from '../../src/store/index.ts'
import { filePetWriter } from '../../src/store/sqlite/pet-writer.ts'
import { WalSync, type SyncFile } from '../../src/store/sqlite/wal-sync.ts'

// A broken rule shows as a write that never resolves: each test fails after 10 s instead of hanging.

/** A sync that returns only when the test says so, and remembers what it was asked to sync. */
function heldSync () {
  const calls: Array<{ fd: number, release: (error?: Error) => void }> = []
  const sync: SyncFile = (fd, done) => {
    let released = false
    calls.push({ fd, release: (error) => { if (!released) { released = true; done(error ?? null) } } })
  }
  // For the end of a test whose rule broke: lets every sync still held go, so closing ends.
  const releaseAll = async () => {
    for (let seen = -1; seen !== calls.length; await turn()) {
      seen = calls.length
      for (const call of calls) call.release()
    }
  }
  return { sync, calls, releaseAll }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

function tempDir (t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-walsync-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('WalSync: a commit is durable only once a sync that began after it has returned; commits during a sync share the next one', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t)
  // Any file will do: the sync itself is held by the test.
  const wal = join(dir, 'file-wal')
  writeFileSync(wal, 'frames')
  const { sync, calls } = heldSync()
  const walSync = new WalSync(wal, sync)
  const settled: string[] = []
  const first = walSync.durable().then(() => settled.push('first'))
  await turn()
  assert.equal(calls.length, 1)
  assert.equal(fstatSync(calls[0]!.fd).ino, statSync(wal).ino, 'the descriptor synced is the WAL file')
  const later = [1, 2, 3].map((i) => walSync.durable().then(() => settled.push(`later ${i}`)))
  await turn()
  assert.deepEqual(settled, [], 'nothing is durable before the sync returns')
  assert.equal(calls.length, 1, 'one sync at a time')
  calls[0]!.release()
  await first
  assert.deepEqual(settled, ['first'], 'commits made during a sync wait for the next one')
  assert.equal(calls.length, 2, 'the next sync starts as soon as the first returns, for all who wait')
  calls[1]!.release()
  await Promise.all(later)
  assert.deepEqual(settled, ['first', 'later 1', 'later 2', 'later 3'])
  const failing = walSync.durable()
  await turn()
  const during = walSync.durable()
  calls[2]!.release(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
  await assert.rejects(failing, /EIO/)
  await assert.rejects(during, /EIO/, 'a commit made during the failed sync is not durable either')
  // A failed sync is final: a later sync proves nothing about the frames before it.
  await assert.rejects(walSync.durable(), /EIO/)
  assert.equal(calls.length, 3, 'no sync is tried after one failed')
  assert.match(String(walSync.failure), /EIO/)
  await walSync.close()
})

test('the file pet writer resolves a create only after the WAL holding its commit is synced, and a failed sync is an outage', { timeout: 10_000 }, async (t) => {
  const path = join(tempDir(t), 'petstore.db')
  const store = await openStore(`sqlite:${path}`)
  await store.migrate()
  await store.close()
  const { sync, calls } = heldSync()
  const writer = filePetWriter(path, sync)
  let created: unknown
  const create = writer.createPet({ name: 'Rex', categoryId: 7n }).then((pet) => { created = pet })
  for (let i = 0; i < 3; i++) await turn()
  assert.equal(calls.length, 1, 'the commit asked for a sync')
  assert.equal(fstatSync(calls[0]!.fd).ino, statSync(`${path}-wal`).ino, 'of the WAL file')
  // Committed (another connection sees it) but not yet resolved: the sync has not returned.
  const reader = new DatabaseSync(path, { readOnly: true })
  t.after(() => reader.close())
  assert.equal(reader.prepare('SELECT count(*) AS n FROM pets').get()?.n, 1)
  assert.equal(created, undefined)
  calls[0]!.release()
  await create
  assert.deepEqual(created, { id: 1n, name: 'Rex', categoryId: 7n })

  const failed = writer.createPet({ name: 'Fido', categoryId: 7n })
  for (let i = 0; i < 3; i++) await turn()
  calls[1]!.release(new Error('EIO: i/o error, fdatasync'))
  await assert.rejects(failed, (error) => error instanceof StoreUnavailableError && /could not be synced/.test(error.message))
  assert.match(String(writer.failure()), /EIO/, 'the store reports the failure (readiness fails)')
  await assert.rejects(writer.createPet({ name: 'Lad', categoryId: 7n }), StoreUnavailableError)
  await writer.close()
  await assert.rejects(writer.createPet({ name: 'Late', categoryId: 7n }), /the store is closed/)
})

/** A WAL database with table t, a connection that fails at once on a held lock, and another to hold it. */
function contendedDatabase (t: { after(fn: () => void): void }, name: string): { db: DatabaseSync, other: DatabaseSync } {
  const path = join(tempDir(t), name)
  const setup = new DatabaseSync(path)
  setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER)')
  const other = new DatabaseSync(path)
  t.after(() => { setup.close(); other.close() })
  const db = new DatabaseSync(path)
  db.exec('PRAGMA busy_timeout = 0')
  return { db, other }
}

test('a batch waits for a write lock held by another connection without holding the event loop, then commits', { timeout: 10_000 }, async (t) => {
  const { db, other } = contendedDatabase(t, 'locks.db')
  const commits = new GroupCommit(db, { lockWaitMs: 1_000 })
  other.exec('BEGIN IMMEDIATE')
  const insert = db.prepare('INSERT INTO t (x) VALUES (1)')
  const write = commits.run(() => insert.run(), true)
  // The event loop turns while the write waits: timers fire.
  const ticks = await new Promise<number>((resolve) => {
    let n = 0
    const timer = setInterval(() => { if (++n === 5) { clearInterval(timer); resolve(n) } }, 2)
  })
  assert.equal(ticks, 5)
  other.exec('COMMIT')
  await write
  assert.equal(db.prepare('SELECT count(*) AS n FROM t').get()?.n, 1)

  const short = new GroupCommit(db, { lockWaitMs: 30 })
  other.exec('BEGIN IMMEDIATE')
  await assert.rejects(short.run(() => insert.run(), true), (error) => error instanceof StoreUnavailableError)
  other.exec('ROLLBACK')
  db.close()
})

test('past the lock wait, only the writes whose own wait is over get 503; those that came later keep waiting and commit', { timeout: 10_000 }, async (t) => {
  const { db, other } = contendedDatabase(t, 'deadline.db')
  const commits = new GroupCommit(db, { lockWaitMs: 100 })
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
  other.exec('BEGIN IMMEDIATE')
  const early = commits.run(() => insert.run(1), true)
  await new Promise((resolve) => setTimeout(resolve, 60))
  const late = commits.run(() => insert.run(2), true)
  await assert.rejects(early, StoreUnavailableError)
  other.exec('COMMIT')
  await late
  assert.deepEqual(db.prepare('SELECT x FROM t').all().map((row) => row.x), [2])
  db.close()
})

test('creates that arrive while a sync runs wait for it, then commit together and share the next sync', { timeout: 10_000 }, async (t) => {
  const path = join(tempDir(t), 'petstore.db')
  const store = await openStore(`sqlite:${path}`)
  await store.migrate()
  await store.close()
  const { sync, calls, releaseAll } = heldSync()
  const writer = filePetWriter(path, sync)
  t.after(async () => { await releaseAll(); await writer.close() })
  const reader = new DatabaseSync(path, { readOnly: true })
  t.after(() => reader.close())
  const visible = () => reader.prepare('SELECT count(*) AS n FROM pets').get()?.n
  const create = (name: string) => writer.createPet({ name, categoryId: 1n })
  const first = create('a')
  await turn()
  assert.equal(calls.length, 1)
  const later = [create('b')]
  await turn()
  later.push(create('c'))
  await turn()
  later.push(create('d'))
  for (let i = 0; i < 3; i++) await turn()
  assert.equal(visible(), 1, 'no commit while the sync runs')
  calls[0]!.release()
  await first
  await turn()
  assert.equal(visible(), 4, 'the three commit together once it returns')
  assert.equal(calls.length, 2, 'and share one sync')
  calls[1]!.release()
  assert.deepEqual((await Promise.all(later)).map((pet) => pet.id), [2n, 3n, 4n])
})
