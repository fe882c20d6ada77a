import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { test } from 'node:test'
import { ImportLineError } from '../../src/cli/pets-jsonl.ts'
import { importFile, type CommandIo } from '../../src/cli/pets.ts'
import { createProgress } from '../../src/cli/progress.ts'
import type { CommandStore } from '../../src/cli/command-store.ts'
import { createTestStore } from '../helpers/app.ts'
import { tempDir } from '../helpers/processes.ts'

// The terminal controls the bar writes around each frame.
const SAVE_CURSOR = '\u001b7'
const RESTORE_CURSOR = '\u001b8'
const LINE_START = '\u001b[1G'
const CLEAR_RIGHT = '\u001b[0K'
const CLEAR_LINE = '\u001b[2K'
const frame = (text: string) => [LINE_START, text, CLEAR_RIGHT]
const ERASED = [RESTORE_CURSOR, LINE_START, CLEAR_LINE]

/** A stream shaped like a terminal, 80 columns wide; `written` is what reached it, write by write. */
function terminal (isTTY: boolean, written: string[] = [], tag = '') {
  const stream = new Writable({ write (chunk: Buffer, _encoding, done) { written.push(tag + String(chunk)); done() } })
  return { stream: Object.assign(stream, { isTTY, columns: 80 }), written }
}

test('on a terminal the bar shows the share done, the count, the rate and the time left, redrawn at most every 100 ms, and is erased at the end', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1000 })
  const { stream, written } = terminal(true)
  const progress = createProgress(stream, 1000, 'pets')
  t.mock.timers.tick(1000)
  // A quarter of the bytes and 100 pets in the first second: 100 pets/s, 3 s left.
  progress.update(250, 100)
  t.mock.timers.tick(50)
  // Within 100 ms of the last frame: drawn by the next tick of the bar's timer.
  progress.update(400, 160)
  t.mock.timers.tick(60)
  progress.update(1000, 400)
  progress.finish()
  assert.deepEqual(written, [
    SAVE_CURSOR,
    ...frame('[.........................]   0% 0 pets · -- pets/s · ETA --'),
    ...frame('[######...................]  25% 100 pets · 100 pets/s · ETA 03s'),
    // 160 pets in 1.05 s; 600 bytes left at 400 bytes in 1.05 s.
    ...frame('[##########...............]  40% 160 pets · 152 pets/s · ETA 02s'),
    ...frame('[#########################] 100% 400 pets · 360 pets/s · ETA 00s'),
    ...ERASED
  ])
  const drawn = written.length
  t.mock.timers.tick(1000)
  assert.equal(written.length, drawn, 'nothing is drawn after finish')
})

test('without a known total it counts, with the rate', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 5000 })
  const { stream, written } = terminal(true)
  const progress = createProgress(stream, undefined, 'pets')
  t.mock.timers.tick(2000)
  progress.update(0, 12345)
  progress.finish()
  assert.deepEqual(written, [SAVE_CURSOR, ...frame('0 pets · -- pets/s'), ...frame('12,345 pets · 6,173 pets/s'), ...ERASED])
})

test('off a terminal it draws nothing', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] })
  const { stream, written } = terminal(false)
  const progress = createProgress(stream, 100, 'pets')
  progress.update(50, 5)
  t.mock.timers.tick(1000)
  progress.finish()
  assert.deepEqual(written, [])
})

test('pets import erases its bar before it prints its summary, and before its failure is reported', async (t) => {
  const { store, cleanup } = await createTestStore()
  t.after(cleanup)
  const commands: CommandStore = { open: async () => store, openExisting: async () => store, close: async () => {} }
  // stdout and stderr both on the terminal: one transcript, each write tagged with its stream.
  const transcript: string[] = []
  const io: CommandIo = { stdin: Readable.from([]), stdout: terminal(true, transcript, 'out:').stream, stderr: terminal(true, transcript, 'err:').stream }
  const folder = tempDir(t)
  const file = (name: string, lines: string[]) => { const path = join(folder, name); writeFileSync(path, lines.join('\n') + '\n'); return path }
  const erased = ERASED.map((control) => `err:${control}`)

  await importFile(commands, file('good.jsonl', ['{"name":"A","categoryId":1}', '{"name":"B","categoryId":2}']), {}, io)
  assert.ok(transcript.includes(`err:${SAVE_CURSOR}`), 'the bar was drawn')
  assert.deepEqual(transcript.slice(-4, -1), erased)
  assert.match(transcript.at(-1) ?? '', /^out:imported 2 pets from 2 lines in 1 transaction \(\d+\.\d\d s\)\n$/)

  transcript.length = 0
  await assert.rejects(importFile(commands, file('bad.jsonl', ['{"name":"C","categoryId":3}', '[1]']), {}, io), ImportLineError)
  assert.deepEqual(transcript.slice(-3), erased, 'the bar is gone when the error reaches the command line')

  transcript.length = 0
  const rejects = join(folder, 'rejects.jsonl')
  await assert.rejects(importFile(commands, file('some-bad.jsonl', ['{"name":"D","categoryId":4}', '[1]']), { rejects }, io), { code: 'lines_rejected' })
  assert.deepEqual(transcript.slice(-4, -1), erased)
  assert.match(transcript.at(-1) ?? '', /^out:imported 1 pet from 2 lines in 1 transaction \(\d+\.\d\d s\); 1 line rejected\n$/)
})
