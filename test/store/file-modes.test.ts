import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { openStore } from '../../src/store/index.ts'
import { tempDir } from '../helpers/processes.ts'

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8)

/** Opens a store on path, writes a pet (so the WAL and shm exist), and gives the modes while it is open. */
async function modesAfterAWrite (t: TestContext, path: string) {
  const store = await openStore(`sqlite:${path}`)
  t.after(() => store.close())
  await store.migrate()
  await store.createPet({ name: 'Rex', categoryId: 7n })
  return { db: modeOf(path), wal: modeOf(`${path}-wal`), shm: modeOf(`${path}-shm`) }
}

test('a fresh SQLite store creates its directories 0700 and the database, WAL and shm files 0600', async (t) => {
  const data = join(tempDir(t), 'data', 'pets')
  const files = await modesAfterAWrite(t, join(data, 'petstore.db'))
  assert.deepEqual({ data: modeOf(join(data, '..')), pets: modeOf(data), ...files }, { data: '700', pets: '700', db: '600', wal: '600', shm: '600' })
})

test('a directory the operator made keeps its mode; the files in it are still created 0600', async (t) => {
  const data = join(tempDir(t), 'data')
  mkdirSync(data)
  chmodSync(data, 0o750)
  const files = await modesAfterAWrite(t, join(data, 'petstore.db'))
  assert.deepEqual({ data: modeOf(data), ...files }, { data: '750', db: '600', wal: '600', shm: '600' })
})
