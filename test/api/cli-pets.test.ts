import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import { ImportLineError, importPets, petLine } from '../../src/cli/pets-jsonl.ts'
import type { Pet } from '../../src/contract/schemas.ts'
import { createTestStore } from '../helpers.ts'
import { runCli, tempDir } from '../processes.ts'

/** The CLI as a child process on the store under test (SQLite file or PostgreSQL schema). */
async function cliOnStore (t: import('node:test').TestContext) {
  const testStore = await createTestStore()
  t.after(() => testStore.cleanup())
  const folder = tempDir(t)
  const run = (...args: string[]) => runCli(args, { DATABASE_URL: testStore.url })
  const file = (name: string, text: string) => { const path = join(folder, name); writeFileSync(path, text); return path }
  return { ...testStore, run, file }
}

const STATUSES = ['available', 'pending', 'sold', undefined] as const

function samplePets (count: number): Array<Omit<Pet, 'id'>> {
  return Array.from({ length: count }, (_, i) => {
    const categoryId = i === 0 ? 9223372036854775807n : i === 1 ? -9223372036854775808n : BigInt(i)
    const status = STATUSES[i % 4]
    return { name: i % 7 === 0 ? `Ünïcode 🐈 ${i} "quoted"` : `pet ${i}`, categoryId, ...(status ? { status } : {}) }
  })
}

const asLine = (pet: Omit<Pet, 'id'>) => petLine({ id: 0n, ...pet }).replace('{"id":0,', '{')

test('pets import writes 1200 lines in transactions of 500, and pets export gives them back exactly, in id order', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const pets = samplePets(1200)
  // An id in a line is ignored (the store assigns ids), blank lines are skipped, CRLF is accepted.
  const text = pets.map((pet, i) => i === 3 ? asLine(pet).replace('{', '{"id":424242,') : i === 4 ? asLine(pet).replace('\n', '\r\n') : asLine(pet)).join('') + '\n'
  const imported = await run('pets', 'import', file('pets.jsonl', text))
  assert.equal(imported.stderr, '')
  assert.equal(imported.code, 0)
  assert.match(imported.stdout, /^imported 1200 pets from 1201 lines in 3 transactions \(\d+\.\d\d s\)\n$/)
  assert.equal(await store.countPets(), 1200)

  const exported = await run('pets', 'export')
  assert.deepEqual(exported, { code: 0, stdout: pets.map((pet, i) => petLine({ id: BigInt(i + 1), ...pet })).join(''), stderr: 'exported 1200 pets\n' })
  assert.match(exported.stdout, /^\{"id":1,"name":"Ünïcode 🐈 0 \\"quoted\\"","categoryId":9223372036854775807,"status":"available"\}\n\{"id":2,"name":"pet 1","categoryId":-9223372036854775808,"status":"pending"\}\n/)

  const sold = await run('pets', 'export', '--status', 'sold')
  assert.equal(sold.stdout, pets.flatMap((pet, i) => pet.status === 'sold' ? [petLine({ id: BigInt(i + 1), ...pet })] : []).join(''))
  assert.equal(sold.stderr, 'exported 300 pets\n')
})

test('pets import --json prints the summary as JSON', async (t) => {
  const { run, file } = await cliOnStore(t)
  const path = file('two.jsonl', '{"name":"Rex","categoryId":1}\n{"name":"Tom","categoryId":2,"status":"sold"}\n')
  assert.deepEqual(await run('pets', 'import', path, '--json'), { code: 0, stdout: '{"imported":2,"lines":2,"batches":1}\n', stderr: '' })
})

test('a bad line stops the import: batches before it stay, nothing of its own batch is written, and the message says how to resume', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const lines = ['A', 'B', 'C', 'D', 'E'].map((name, i) => `{"name":"${name}","categoryId":${i + 1}}`)
  // Batches of two: [A B] [C D] [E bad] — E shares the bad line's batch and must not be written.
  const bad = file('bad.jsonl', [...lines, '{"name":" ","categoryId":"6"}', '{"name":"G","categoryId":7}'].join('\n') + '\n')
  const failed = await run('pets', 'import', bad, '--batch-size', '2')
  assert.deepEqual(failed, {
    code: 1,
    stdout: '',
    stderr: 'petstore pets import: line 6: name must not be blank and must not contain control characters; categoryId must be integer. ' +
      '4 pets from lines 1–4 were imported; nothing after line 4. Fix line 6, then run again with --start-line 5.\n'
  })
  assert.deepEqual((await store.listPets({ limit: 100 })).map((pet) => pet.name), ['A', 'B', 'C', 'D'])

  const fixed = file('fixed.jsonl', [...lines, '{"name":"F","categoryId":6}', '{"name":"G","categoryId":7}'].join('\n') + '\n')
  const resumed = await run('pets', 'import', fixed, '--batch-size', '2', '--start-line', '5', '--json')
  assert.deepEqual(resumed, { code: 0, stdout: '{"imported":3,"lines":7,"batches":2}\n', stderr: '' })
  assert.deepEqual((await store.listPets({ limit: 100 })).map((pet) => pet.name), ['A', 'B', 'C', 'D', 'E', 'F', 'G'])
})

test('a line that is not JSON, or not an object, is reported with its number and nothing is written', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const notJson = await run('pets', 'import', file('a.jsonl', '{"name":"A","categoryId":1}\n{"name":"B",\n'))
  assert.equal(notJson.code, 1)
  assert.match(notJson.stderr, /^petstore pets import: line 2: the line is not valid JSON: .+\. Nothing was imported\. Fix line 2, then run again with --start-line 1\.\n$/)
  const array = await run('pets', 'import', file('b.jsonl', '[1]\n'))
  assert.equal(array.stderr, 'petstore pets import: line 1: the line must be a JSON object. Nothing was imported. Fix line 1, then run again with --start-line 1.\n')
  const huge = await run('pets', 'import', file('c.jsonl', '{"name":"A","categoryId":9223372036854775808}\n'))
  assert.match(huge.stderr, /^petstore pets import: line 1: categoryId must be a signed 64-bit integer/)
  assert.equal(await store.countPets(), 0)
})

test('pets import and export refuse bad arguments with exit 2, and a missing file with exit 1', async (t) => {
  const { run } = await cliOnStore(t)
  const usage = 'Usage: npm run --silent petstore -- pets import FILE.jsonl [--batch-size N] [--start-line N] [--json]\n'
  assert.deepEqual(await run('pets', 'import'), { code: 2, stdout: '', stderr: 'petstore pets import: expected the file to import (FILE.jsonl, or - for stdin)\n' + usage })
  assert.deepEqual(await run('pets', 'import', 'x.jsonl', '--batch-size', '0'), { code: 2, stdout: '', stderr: 'petstore pets import: --batch-size needs a whole number from 1 to 10000; got "0"\n' + usage })
  assert.deepEqual(await run('pets', 'import', '/nonexistent/pets.jsonl'), { code: 1, stdout: '', stderr: 'petstore pets import: cannot read /nonexistent/pets.jsonl: ENOENT\n' })
  assert.deepEqual(await run('pets', 'export', '--status', 'lost'), {
    code: 2, stdout: '', stderr: 'petstore pets export: --status must be one of available, pending, sold; got "lost"\nUsage: npm run --silent petstore -- pets export [--status STATUS]\n'
  })
})

test('a bad line ends the progress bar before the error is reported: its redraw timer would keep the process running', async (t) => {
  const { store } = await cliOnStore(t)
  const calls: string[] = []
  const progress = { update: () => { calls.push('update') }, finish: () => { calls.push('finish') } }
  const input = Readable.from(['{"name":"A","categoryId":1}\n', '[1]\n'])
  await assert.rejects(importPets(store, input, { batchSize: 1, startLine: 1, progress }), ImportLineError)
  assert.deepEqual(calls, ['update', 'finish'])
  assert.equal(await store.countPets(), 1)
})
