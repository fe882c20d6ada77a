import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli, tempDir } from '../helpers/processes.ts'

/** The summary of pets import in words (test/api/cli-pets.test.ts has the rest of import). */

test('pets import --start-line 5 of a 6-line file counts the 2 lines it read, not the 4 it skipped', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'pets.jsonl')
  writeFileSync(file, Array.from({ length: 6 }, (_, i) => JSON.stringify({ name: `pet ${i + 1}`, categoryId: 7 }) + '\n').join(''))
  const run = await runCli(['pets', 'import', file, '--start-line', '5'], { DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}` })
  assert.deepEqual({ ...run, stdout: run.stdout.replace(/\(\d+\.\d\d s\)/, '(<s>)') }, {
    code: 0, stdout: 'imported 2 pets from 2 lines in 1 transaction (<s>)\n', stderr: ''
  })
})

test('pets import of a missing file exits 1 with one line saying there is no such file', async (t) => {
  const dir = tempDir(t)
  const missing = join(dir, 'missing.jsonl')
  assert.deepEqual(await runCli(['pets', 'import', missing], { DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}` }), {
    code: 1, stdout: '', stderr: `petstore pets import: cannot read ${missing}: no such file\n`
  })
})
