import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { GroupCommit } from '../../src/store/sqlite/group-commit.ts'

test('writes made together share one transaction; a failing write is rolled back alone and the others commit', async () => {
  const db = new DatabaseSync(':memory:')
  db.exec('CREATE TABLE t (x INTEGER NOT NULL UNIQUE)')
  const commits = new GroupCommit(db)
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
  const results = await Promise.allSettled([
    commits.run(() => insert.run(1)),
    commits.run(() => { insert.run(2); insert.run(1) }),
    commits.run(() => insert.run(3))
  ])
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'])
  assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE constraint failed/)
  // The failing write's first row (2) went with it; 1 and 3 are in.
  assert.deepEqual(db.prepare('SELECT x FROM t ORDER BY x').all().map((row) => row.x), [1, 3])
  assert.equal(db.isTransaction, false)
})

test('a one-statement write that fails is undone alone without a savepoint; the batch still commits', async () => {
  const db = new DatabaseSync(':memory:')
  db.exec('CREATE TABLE t (x INTEGER NOT NULL UNIQUE)')
  const commits = new GroupCommit(db)
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
  const results = await Promise.allSettled([
    commits.run(() => insert.run(1), true),
    commits.run(() => insert.run(1), true),
    commits.run(() => { insert.run(2); insert.run(1) }),
    commits.run(() => insert.run(3), true)
  ])
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled'])
  assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE constraint failed/)
  assert.deepEqual(db.prepare('SELECT x FROM t ORDER BY x').all().map((row) => row.x), [1, 3])
  assert.equal(db.isTransaction, false)
})
