import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { createProgress } from '../src/cli/progress.ts'

// The terminal controls the bar writes around each frame.
const SAVE_CURSOR = '\u001b7'
const RESTORE_CURSOR = '\u001b8'
const LINE_START = '\u001b[1G'
const CLEAR_RIGHT = '\u001b[0K'
const CLEAR_LINE = '\u001b[2K'
const frame = (text: string) => [LINE_START, text, CLEAR_RIGHT]

function terminal (isTTY: boolean) {
  const written: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _encoding, done) { written.push(String(chunk)); done() } })
  return { stream: Object.assign(stream, { isTTY, columns: 60 }), written }
}

test('on a terminal the bar is drawn at once, redrawn at most every 100 ms, and erased at the end', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1000 })
  const { stream, written } = terminal(true)
  const progress = createProgress(stream, 200, 'pets')
  progress.update(50, 10)
  t.mock.timers.tick(50)
  progress.update(80, 20)
  t.mock.timers.tick(60)
  progress.update(200, 40)
  progress.finish()
  assert.deepEqual(written, [
    SAVE_CURSOR,
    ...frame('[..............................]   0% 0 pets'),
    ...frame('[############..................]  40% 20 pets'),
    ...frame('[##############################] 100% 40 pets'),
    RESTORE_CURSOR, LINE_START, CLEAR_LINE
  ])
  const drawn = written.length
  t.mock.timers.tick(1000)
  assert.equal(written.length, drawn, 'nothing is drawn after finish')
})

test('without a known total it counts', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 5000 })
  const { stream, written } = terminal(true)
  const progress = createProgress(stream, undefined, 'pets')
  progress.update(0, 12345)
  t.mock.timers.tick(100)
  progress.finish()
  assert.deepEqual(written, [SAVE_CURSOR, ...frame('0 pets'), ...frame('12,345 pets'), RESTORE_CURSOR, LINE_START, CLEAR_LINE])
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
