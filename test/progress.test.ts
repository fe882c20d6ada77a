import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createProgress } from '../src/cli/progress.ts'

function terminal (isTTY: boolean) {
  const written: string[] = []
  return { stream: { isTTY, columns: 60, write: (text: string) => written.push(text) }, written }
}

test('on a terminal the bar is redrawn at most every 100 ms and erased at the end', () => {
  const { stream, written } = terminal(true)
  let now = 1000
  const progress = createProgress(stream, 200, 'pets', () => now)
  progress.update(50, 10)
  now += 50
  progress.update(80, 20)
  now += 60
  progress.update(200, 40)
  progress.finish()
  assert.deepEqual(written, [
    '\r[##########..............................]  25% 10 pets\u001b[K',
    '\r[########################################] 100% 40 pets\u001b[K',
    '\r\u001b[K'
  ])
})

test('without a known total it counts; off a terminal it draws nothing', () => {
  const counting = terminal(true)
  const progress = createProgress(counting.stream, undefined, 'pets', () => 5000)
  progress.update(0, 12345)
  assert.deepEqual(counting.written, ['\r12,345 pets\u001b[K'])
  const piped = terminal(false)
  const silent = createProgress(piped.stream, 100, 'pets')
  silent.update(50, 5)
  silent.finish()
  assert.deepEqual(piped.written, [])
})
