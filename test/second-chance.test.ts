import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SecondChanceMap } from '../src/http/second-chance.ts'

test('second-chance map: entries read between drops survive any number of laps of the hand; the size never passes the capacity', () => {
  const map = new SecondChanceMap<string, number>(100)
  const hot = Array.from({ length: 10 }, (_, i) => `hot-${i}`)
  for (const key of hot) map.set(key, 1)
  for (let i = 0; i < 10_000; i++) {
    map.set(`cold-${i}`, i)
    // Read every tenth insert: each hot entry is marked again before the hand comes back.
    if (i % 10 === 0) for (const key of hot) assert.equal(map.get(key), 1)
    assert.ok(map.size <= 100)
  }
  assert.equal(map.size, 100)
  assert.ok(map.isFull)
  // Besides the hot ten, the newest 90 cold entries, each with its own value.
  assert.deepEqual(Array.from({ length: 90 }, (_, i) => map.get(`cold-${9_910 + i}`)), Array.from({ length: 90 }, (_, i) => 9_910 + i))
  assert.equal(map.get('cold-9909'), undefined)
})

test('second-chance map: setting a key it holds replaces the value in place; a capacity of 0 keeps nothing', () => {
  const map = new SecondChanceMap<string, string>(2)
  map.set('a', 'A')
  map.set('a', 'A2')
  map.set('b', 'B')
  assert.deepEqual([map.size, map.get('a'), map.get('b')], [2, 'A2', 'B'])
  const none = new SecondChanceMap<string, string>(0)
  none.set('a', 'A')
  assert.deepEqual([none.size, none.get('a')], [0, undefined])
})
