import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { countsOf } from '../src/instructions.ts'

const CALLGRIND_FILE = (summary: number) => `# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4242\ncmd:  node src/server.ts\npart: 1\n\ndesc: I1 cache: \nevents: Ir\nsummary: ${summary}\n\nfn=(1) main\n0 ${summary}\n\ntotals: ${summary}\n`

test('countsOf adds up every thread\'s file of one dump and gives the main thread\'s apart, and its file; other dumps, the files written at exit and others are not counts', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-counts-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'callgrind.out.4242.1-01'), CALLGRIND_FILE(1000))
  writeFileSync(join(dir, 'callgrind.out.4242.1-02'), CALLGRIND_FILE(7))
  writeFileSync(join(dir, 'callgrind.out.4242.1-10'), CALLGRIND_FILE(300))
  writeFileSync(join(dir, 'callgrind.out.4242.2-01'), CALLGRIND_FILE(50000))
  writeFileSync(join(dir, 'callgrind.out.4242'), '')
  writeFileSync(join(dir, 'petstore.db'), 'summary: 99999\n')
  writeFileSync(join(dir, 'callgrind.out.4242.2-02'), CALLGRIND_FILE(9))
  writeFileSync(join(dir, 'callgrind.out.4242.12-01'), CALLGRIND_FILE(70000))
  assert.deepEqual(countsOf(dir, 1), { all: 1307, eventLoop: 1000, eventLoopFile: 'callgrind.out.4242.1-01' })
  assert.deepEqual(countsOf(dir, 2), { all: 50009, eventLoop: 50000, eventLoopFile: 'callgrind.out.4242.2-01' })
})

test('countsOf refuses a run whose main thread wrote no count', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-counts-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'callgrind.out.4242.1-02'), CALLGRIND_FILE(7))
  writeFileSync(join(dir, 'callgrind.out.4242.2-01'), CALLGRIND_FILE(50000))
  assert.throws(() => countsOf(dir, 1), { message: `callgrind wrote no count for the main thread of dump 1 in ${dir}` })
})
