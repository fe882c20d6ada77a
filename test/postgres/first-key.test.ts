import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ensureFirstKey } from '../../src/auth/first-key.ts'
import { openStore } from '../../src/store/index.ts'
import { freshSchema } from '../helpers/pg-schema.ts'
import { tempDir } from '../helpers/processes.ts'

const INSTANCES = 8

test(`${INSTANCES} instances making the first key at once on an empty PostgreSQL schema make one between them`, async (t) => {
  const { url } = freshSchema(t)
  // One store per instance, each with its pool, and each its own key file as on its own host.
  const stores = await Promise.all(Array.from({ length: INSTANCES }, () => openStore(url)))
  t.after(() => Promise.all(stores.map((store) => store.close())))
  await stores[0]!.migrate()
  const files = stores.map(() => join(tempDir(t), 'first-api-key'))
  const outcomes = await Promise.all(stores.map((store, i) => ensureFirstKey(store, files[i]!)))

  assert.deepEqual(outcomes.map((outcome) => outcome.outcome).sort(), ['created', ...Array(INSTANCES - 1).fill('keys_exist')])
  const written = files.filter((file) => existsSync(file))
  assert.equal(written.length, 1, 'one instance wrote a key file')
  const keys = await stores[0]!.listApiKeys()
  assert.deepEqual(keys.map((key) => key.name), ['first key'])
  assert.ok(readFileSync(written[0]!, 'utf8').startsWith(keys[0]!.prefix), 'the file holds the stored key')
})
