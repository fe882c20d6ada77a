import assert from 'node:assert/strict'
import { fstatSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { StoreUnavailableError } from '../src/store/errors.ts'
import { GroupCommit } from '../src/store/group-commit.ts'
import { openStore } from '../src/store/index.ts'
import { filePetWriter } from '../src/store/sqlite-pet-writer.ts'
import { WalSync, type SyncFile } from '../src/store/wal-sync.ts'

/** A sync that returns only when the test says so, and remembers what it was asked to sync. */
function heldSync () {
  const calls: Array<{ fd: number, release: (error?: Error) => void }> = []
  const sync: SyncFile = (fd, done) => { calls.push({ fd, release: (error) => done(error ?? null) }) }
  return { sync, calls }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

function tempDir (t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-walsync-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('WalSync: a commit is durable only once a sync that began after it has returned; commits during a sync share the next one', async (t) => {
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
  calls[2]!.release(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
  await assert.rejects(failing, /EIO/)
  await walSync.close()
})

test('the file pet writer answers a create only after the WAL holding its commit is synced, and a failed sync is an outage', async (t) => {
  const path = join(tempDir(t), 'petstore.db')
  const store = await openStore(`sqlite:${path}`)
  await store.migrate()
  await store.close()
  const { sync, calls } = heldSync()
  const writer = filePetWriter(path, sync)
  let answered: unknown
  const create = writer.run({ op: 'createPet', pet: { name: 'Rex', categoryId: 7n } }).then((pet) => { answered = pet })
  for (let i = 0; i < 3; i++) await turn()
  assert.equal(calls.length, 1, 'the commit asked for a sync')
  assert.equal(fstatSync(calls[0]!.fd).ino, statSync(`${path}-wal`).ino, 'of the WAL file')
  // Committed (another connection sees it) but not yet answered: the sync has not returned.
  const reader = new DatabaseSync(path, { readOnly: true })
  t.after(() => reader.close())
  assert.equal(reader.prepare('SELECT count(*) AS n FROM pets').get()?.n, 1)
  assert.equal(answered, undefined)
  calls[0]!.release()
  await create
  assert.deepEqual(answered, { id: 1n, name: 'Rex', categoryId: 7n })

  const failed = writer.run({ op: 'createPet', pet: { name: 'Fido', categoryId: 7n } })
  for (let i = 0; i < 3; i++) await turn()
  calls[1]!.release(new Error('EIO: i/o error, fdatasync'))
  await assert.rejects(failed, (error) => error instanceof StoreUnavailableError && /could not be synced/.test(error.message))
  await writer.close()
})

test('a batch waits for a write lock held by another connection without holding the event loop, then commits', async (t) => {
  const path = join(tempDir(t), 'locks.db')
  const setup = new DatabaseSync(path)
  setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER)')
  const other = new DatabaseSync(path)
  t.after(() => { setup.close(); other.close() })
  const db = new DatabaseSync(path)
  db.exec('PRAGMA busy_timeout = 0')
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
