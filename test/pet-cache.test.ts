import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FinalAnswers } from '../src/routes/pet-cache.ts'

test('final answers: everything is kept while there is room; a read makes an entry the most recent', () => {
  const cache = new FinalAnswers<string>(3)
  for (const key of ['a', 'b', 'c']) cache.set(key, key.toUpperCase())
  assert.deepEqual(['a', 'b', 'c'].map((key) => cache.get(key)), ['A', 'B', 'C'])
  assert.equal(cache.get('a'), 'A') // a is now the most recent; b the least
  for (let i = 0; i < 8; i++) cache.set(`new-${i}`, 'N')
  // Full: of eight misses one was kept, in place of the least recently used entry (b).
  assert.deepEqual(['a', 'b', 'c'].map((key) => cache.get(key)), ['A', undefined, 'C'])
  assert.deepEqual(Array.from({ length: 8 }, (_, i) => cache.get(`new-${i}`)), [undefined, undefined, undefined, undefined, undefined, undefined, undefined, 'N'])
})

test('final answers: a size of 0 keeps nothing', () => {
  const cache = new FinalAnswers<string>(0)
  cache.set('a', 'A')
  assert.equal(cache.get('a'), undefined)
})
