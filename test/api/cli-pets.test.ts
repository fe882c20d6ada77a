import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ImportLineError, importPets, petLine, type RejectedLine } from '../../src/cli/pets-jsonl.ts'
import type { Pet } from '../../src/contract/schemas.ts'
import { createTestStore } from '../helpers/app.ts'
import { runCli, tempDir } from '../helpers/processes.ts'

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
  assert.deepEqual(await run('pets', 'import', path, '--json'), { code: 0, stdout: '{"imported":2,"lines":2,"batches":1,"rejected":0}\n', stderr: '' })
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
  assert.deepEqual(resumed, { code: 0, stdout: '{"imported":3,"lines":3,"batches":2,"rejected":0}\n', stderr: '' }, 'lines counts from the start line on')
  assert.deepEqual((await store.listPets({ limit: 100 })).map((pet) => pet.name), ['A', 'B', 'C', 'D', 'E', 'F', 'G'])
})

test('a line that is not JSON, or not an object, is reported with its number and nothing is written', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const notJson = await run('pets', 'import', file('a.jsonl', '{"name":"A","categoryId":1}\n{"name":"B",\n'))
  assert.equal(notJson.code, 1)
  assert.match(notJson.stderr, /^petstore pets import: line 2: the line is not valid JSON: .+\. Nothing was imported\. Fix line 2, then run again with --start-line 1\.\n$/)
  const array = await run('pets', 'import', file('b.jsonl', '[1]\n'))
  assert.equal(array.stderr, 'petstore pets import: line 1: the line must be a JSON object. Nothing was imported. Fix line 1, then run again with --start-line 1.\n')
  assert.deepEqual(await run('pets', 'import', file('b2.jsonl', '[1]\n'), '--json'), {
    code: 1,
    stdout: '{"error":{"code":"invalid_line","message":"line 1: the line must be a JSON object. Nothing was imported. Fix line 1, then run again with --start-line 1."}}\n',
    stderr: 'petstore pets import: line 1: the line must be a JSON object. Nothing was imported. Fix line 1, then run again with --start-line 1.\n'
  })
  const huge = await run('pets', 'import', file('c.jsonl', '{"name":"A","categoryId":9223372036854775808}\n'))
  assert.match(huge.stderr, /^petstore pets import: line 1: categoryId must be a signed 64-bit integer/)
  assert.equal(await store.countPets(), 0)
})

test('pets import and export refuse bad arguments with exit 2, and a missing file with exit 1', async (t) => {
  const { run } = await cliOnStore(t)
  const usage = 'Usage: npm run --silent petstore -- pets import FILE.jsonl [--skip-existing] [--batch-size N] [--start-line N] [--rejects FILE] [--json]\n'
  assert.deepEqual(await run('pets', 'import'), { code: 2, stdout: '', stderr: 'petstore pets import: expected the file to import (FILE.jsonl, or - for stdin)\n' + usage })
  assert.deepEqual(await run('pets', 'import', 'x.jsonl', '--batch-size', '0'), { code: 2, stdout: '', stderr: 'petstore pets import: --batch-size needs a whole number from 1 to 10000; got "0"\n' + usage })
  const folder = tempDir(t)
  const missing = join(folder, 'missing', 'pets.jsonl')
  assert.deepEqual(await run('pets', 'import', missing), { code: 1, stdout: '', stderr: `petstore pets import: cannot read ${missing}: no such file\n` })
  assert.deepEqual(await run('pets', 'import', folder), { code: 1, stdout: '', stderr: `petstore pets import: ${folder} is a directory, not a JSON Lines file\n` })
  assert.deepEqual(await run('pets', 'import', folder, '--json'), {
    code: 1, stdout: `{"error":{"code":"cannot_read","message":"${folder} is a directory, not a JSON Lines file"}}\n`, stderr: `petstore pets import: ${folder} is a directory, not a JSON Lines file\n`
  })
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

/** Three valid lines (A, B, E), four bad ones and a blank line, for --rejects. */
const MIXED = [
  '{"name":"A","categoryId":1}',
  '{"name":" ","categoryId":2}',
  '{"name":"B","categoryId":3}',
  '{"name":"C",',
  '',
  '{"name":"D","categoryId":"4"}',
  '{"name":"E","categoryId":5,"status":"sold"}',
  '[1]'
]

test('pets import --rejects imports every valid line, lists each bad one with its number, reason and text, and exits 1', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const input = file('mixed.jsonl', MIXED.join('\n') + '\n')
  const rejects = file('rejects.jsonl', 'left over from an earlier run\n')
  const result = await run('pets', 'import', input, '--batch-size', '2', '--rejects', rejects)
  assert.equal(result.code, 1)
  assert.match(result.stdout, /^imported 3 pets from 8 lines in 2 transactions \(\d+\.\d\d s\); 4 lines rejected\n$/)
  assert.equal(result.stderr, `petstore pets import: 4 lines rejected, listed in ${rejects}\n`)
  assert.deepEqual((await store.listPets({ limit: 100 })).map(({ id: _id, ...pet }) => pet), [
    { name: 'A', categoryId: 1n },
    { name: 'B', categoryId: 3n },
    { name: 'E', categoryId: 5n, status: 'sold' }
  ])
  const listed = readFileSync(rejects, 'utf8').split('\n')
  assert.equal(listed.pop(), '', 'one JSON line each, each ended')
  const notJson = JSON.parse(listed[1]!).reason
  assert.match(notJson, /^the line is not valid JSON: /)
  assert.deepEqual(listed.map((line) => JSON.parse(line)), [
    { line: 2, reason: 'name must not be blank and must not contain control characters', text: MIXED[1] },
    { line: 4, reason: notJson, text: MIXED[3] },
    { line: 6, reason: 'categoryId must be integer', text: MIXED[5] },
    { line: 8, reason: 'the line must be a JSON object', text: MIXED[7] }
  ])

  // Under --json the summary and the error come as one object.
  const again = await run('pets', 'import', input, '--rejects', rejects, '--json')
  assert.deepEqual({ ...again, stdout: JSON.parse(again.stdout) }, {
    code: 1,
    stdout: { imported: 3, lines: 8, batches: 1, rejected: 4, error: { code: 'lines_rejected', message: `4 lines rejected, listed in ${rejects}` } },
    stderr: `petstore pets import: 4 lines rejected, listed in ${rejects}\n`
  })
  assert.equal(readFileSync(rejects, 'utf8').split('\n').length, 5, 'the rejects file is written afresh')
})

test('pets import --rejects with no bad line exits 0 and leaves the rejects file empty', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const rejects = file('rejects.jsonl', 'old\n')
  const result = await run('pets', 'import', file('good.jsonl', '{"name":"A","categoryId":1}\n'), '--rejects', rejects)
  assert.equal(result.code, 0, result.stderr)
  assert.match(result.stdout, /^imported 1 pet from 1 line in 1 transaction \(\d+\.\d\d s\); 0 lines rejected\n$/)
  assert.equal(result.stderr, '')
  assert.equal(readFileSync(rejects, 'utf8'), '')
  assert.equal(await store.countPets(), 1)
})

test('pets import --rejects refuses the imported file itself (exit 2) and a path it cannot write (exit 1), before importing anything', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const input = file('pets.jsonl', '{"name":"A","categoryId":1}\n')
  const usage = 'Usage: npm run --silent petstore -- pets import FILE.jsonl [--skip-existing] [--batch-size N] [--start-line N] [--rejects FILE] [--json]\n'
  assert.deepEqual(await run('pets', 'import', input, '--rejects', input), { code: 2, stdout: '', stderr: 'petstore pets import: --rejects needs a file other than the one imported\n' + usage })
  const unwritable = join(tempDir(t), 'missing', 'rejects.jsonl')
  assert.deepEqual(await run('pets', 'import', input, '--rejects', unwritable, '--json'), {
    code: 1,
    stdout: `{"error":{"code":"cannot_write","message":"cannot write ${unwritable}: no such folder"}}\n`,
    stderr: `petstore pets import: cannot write ${unwritable}: no such folder\n`
  })
  assert.equal(readFileSync(input, 'utf8'), '{"name":"A","categoryId":1}\n')
  assert.equal(await store.countPets(), 0)
})

/** A line of exactly `bytes` bytes that is a valid pet: the padding is a field createPet ignores. */
function paddedLine (name: string, bytes: number): string {
  const head = `{"name":"${name}","categoryId":1,"pad":"`
  return head + 'x'.repeat(bytes - head.length - 2) + '"}'
}

test('pets import --rejects lists a line over 16 KiB by its number and its first 256 bytes, and imports the rest', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const huge = '{"name":"' + 'é'.repeat(3 * 1024 * 1024) + '","categoryId":2}'
  const lines = ['{"name":"A","categoryId":1}', huge, paddedLine('B', 16 * 1024), paddedLine('C', 16 * 1024 + 1), '{"name":"D","categoryId":3}']
  const rejects = file('rejects.jsonl', '')
  // \r\n ends: the \r is not part of the line, so a line of exactly 16 KiB still fits.
  const result = await run('pets', 'import', file('long.jsonl', lines.join('\r\n')), '--rejects', rejects)
  assert.equal(result.code, 1, result.stderr)
  assert.match(result.stdout, /^imported 3 pets from 5 lines in 1 transaction \(\d+\.\d\d s\); 2 lines rejected\n$/)
  assert.deepEqual((await store.listPets({ limit: 10 })).map((pet) => pet.name), ['A', 'B', 'D'])
  const listed = readFileSync(rejects, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line))
  // 256 bytes: the 9 of {"name":" and 123 two-byte characters, the cut before the 124th's second byte.
  assert.deepEqual(listed, [
    { line: 2, reason: `the line is ${Buffer.byteLength(huge)} bytes, longer than the 16 KiB createPet takes`, text: '{"name":"' + 'é'.repeat(123) },
    { line: 4, reason: 'the line is 16385 bytes, longer than the 16 KiB createPet takes', text: lines[3]!.slice(0, 256) }
  ])
})

test('a line over 16 KiB stops an import without --rejects like any bad line, with its number', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const input = file('long.jsonl', ['{"name":"A","categoryId":1}', 'x'.repeat(4 * 1024 * 1024), '{"name":"B","categoryId":2}'].join('\n') + '\n')
  const result = await run('pets', 'import', input, '--batch-size', '1')
  assert.deepEqual(result, {
    code: 1,
    stdout: '',
    stderr: 'petstore pets import: line 2: the line is 4194304 bytes, longer than the 16 KiB createPet takes. 1 pets from lines 1–1 were imported; nothing after line 1. Fix line 2, then run again with --start-line 2.\n'
  })
  assert.equal(await store.countPets(), 1)
})

test('an over-long line is never held whole: importing a 256 MiB line keeps memory bounded', async (t) => {
  const { store } = await cliOnStore(t)
  const chunk = 1024 * 1024
  let peak = 0
  // Each chunk a fresh buffer, so that holding the line would hold every one of them.
  async function * input () {
    yield Buffer.from('{"name":"A","categoryId":1}\n')
    for (let i = 0; i < 256; i++) {
      // After a collection only the buffers still referenced are counted.
      if (i % 32 === 31) {
        gc()
        peak = Math.max(peak, process.memoryUsage().arrayBuffers)
      }
      yield Buffer.alloc(chunk, 'a')
    }
    yield Buffer.from('\n{"name":"B","categoryId":2}\n')
  }
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  const rejected: RejectedLine[] = []
  const before = process.memoryUsage().arrayBuffers
  const progress = { update: () => {}, finish: () => {} }
  const summary = await importPets(store, Readable.from(input()), { batchSize: 10, startLine: 1, progress, reject: async (line) => { rejected.push(line) } })
  assert.deepEqual(summary, { imported: 2, lines: 3, batches: 1, rejected: 1 })
  assert.equal(rejected[0]?.reason, `the line is ${256 * chunk} bytes, longer than the 16 KiB createPet takes`)
  // Readable.from reads up to 16 chunks ahead of the importer, and a collection may leave a few
  // more: far below the 256 chunks that holding the line would keep.
  assert.ok(peak - before < 64 * chunk, `${(peak - before) / chunk} MiB of buffers held`)
})

test('pets import --skip-existing keeps the ids of an export, and run again adds nothing', async (t) => {
  const source = await cliOnStore(t)
  const pets = samplePets(12)
  assert.equal((await source.run('pets', 'import', source.file('pets.jsonl', pets.map(asLine).join('')))).code, 0)
  // Gaps, as in a store whose pets were not all kept: ids 2, 3, 5, … 12 of 12.
  const exported = (await source.run('pets', 'export')).stdout.split('\n').filter((line, i) => line !== '' && i !== 0 && i !== 3).join('\n') + '\n'

  const { run, file, store } = await cliOnStore(t)
  const path = file('export.jsonl', exported)
  const first = await run('pets', 'import', path, '--skip-existing', '--batch-size', '4', '--json')
  assert.deepEqual(first, { code: 0, stdout: '{"imported":10,"skipped":0,"lines":10,"batches":3,"rejected":0}\n', stderr: '' })
  assert.equal((await run('pets', 'export')).stdout, exported, 'every pet under the id it had')

  const again = await run('pets', 'import', path, '--skip-existing')
  assert.equal(again.code, 0, again.stderr)
  assert.match(again.stdout, /^imported 0 pets \(10 pets already there, skipped\) from 10 lines in 1 transaction \(\d+\.\d\d s\)\n$/)
  assert.equal(await store.countPets(), 10)
  // The store goes on above the imported ids: a new pet never takes an id an import gave.
  assert.equal((await store.createPet({ name: 'after', categoryId: 1n })).id, 13n)
})

test('pets import --skip-existing refuses a line whose id holds another pet, or is new below the largest id, or is missing', async (t) => {
  const { run, file, store } = await cliOnStore(t)
  const line = (id: number | string | undefined, name: string) => `{${id === undefined ? '' : `"id":${id},`}"name":"${name}","categoryId":1}`
  assert.equal((await run('pets', 'import', file('first.jsonl', [line(5, 'A'), line(7, 'B')].join('\n') + '\n'), '--skip-existing')).code, 0)

  const changed = await run('pets', 'import', file('changed.jsonl', [line(5, 'A'), line(7, 'Z'), line(9, 'C')].join('\n') + '\n'), '--skip-existing')
  assert.deepEqual(changed, {
    code: 1,
    stdout: '',
    stderr: 'petstore pets import: line 2: pet 7 is already stored with other values: name "B", categoryId 1, status none. ' +
      'Nothing was imported. Fix line 2, then run again with --start-line 1.\n'
  })
  assert.deepEqual((await store.listPets({ limit: 10 })).map((pet) => [pet.id, pet.name]), [[5n, 'A'], [7n, 'B']], 'nothing of the refused batch was written')

  const rejects = join(tempDir(t), 'rejects.jsonl')
  const lines = [line(6, 'below'), line(8, 'D'), line(undefined, 'no id'), line('"9"', 'text id'), line(8, 'D')]
  const mixed = await run('pets', 'import', file('mixed.jsonl', lines.join('\n') + '\n'), '--skip-existing', '--rejects', rejects, '--json')
  assert.deepEqual({ ...mixed, stdout: JSON.parse(mixed.stdout) }, {
    code: 1,
    stdout: { imported: 1, skipped: 1, lines: 5, batches: 1, rejected: 3, error: { code: 'lines_rejected', message: `3 lines rejected, listed in ${rejects}` } },
    stderr: `petstore pets import: 3 lines rejected, listed in ${rejects}\n`
  })
  const idRule = 'id must be a whole number from 1 to 9223372036854775807 (--skip-existing keeps the id of each line)'
  assert.deepEqual(readFileSync(rejects, 'utf8').trimEnd().split('\n').map((text) => JSON.parse(text)), [
    { line: 3, reason: `${idRule}; got none`, text: lines[2] },
    { line: 4, reason: `${idRule}; got "9"`, text: lines[3] },
    { line: 1, reason: 'id 6 is new but not above 7, the largest id the store has assigned; new ids only grow', text: lines[0] }
  ])
  assert.deepEqual((await store.listPets({ limit: 10 })).map((pet) => [pet.id, pet.name]), [[5n, 'A'], [7n, 'B'], [8n, 'D']])
})
