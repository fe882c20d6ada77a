import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FinalAnswers } from '../src/pets/answer-cache.ts'

test('final answers: everything is kept while there is room; once full, the oldest entry not read since it was last passed goes', () => {
  const cache = new FinalAnswers<string>(3)
  for (const key of ['a', 'b', 'c']) cache.set(key, key.toUpperCase())
  assert.equal(cache.get('a'), 'A')
  assert.equal(cache.get('c'), 'C')
  for (let i = 0; i < 8; i++) cache.set(`new-${i}`, 'N')
  // Full: of eight misses one was kept. a, read, got a second chance (kept, unmarked);
  // b, never read, went.
  assert.deepEqual(Array.from({ length: 8 }, (_, i) => cache.get(`new-${i}`)), [undefined, undefined, undefined, undefined, undefined, undefined, undefined, 'N'])
  assert.equal(cache.get('b'), undefined)
  for (let i = 0; i < 8; i++) cache.set(`next-${i}`, 'M')
  // Now c (read) is kept, unmarked, and a, not read since its second chance, goes; new-7 and c stay.
  assert.deepEqual(['a', 'c', 'new-7', 'next-7'].map((key) => cache.get(key)), [undefined, 'C', 'N', 'M'])
})

test('final answers: a size of 0 keeps nothing', () => {
  const cache = new FinalAnswers<string>(0)
  cache.set('a', 'A')
  assert.equal(cache.get('a'), undefined)
})
