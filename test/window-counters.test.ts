import assert from 'node:assert/strict'
import { test } from 'node:test'
import { WindowCounters } from '../src/auth/window-counters.ts'

test('a window starts with its first request, counts down to 0, is exceeded past the budget, and starts over when it ends', () => {
  const counters = new WindowCounters(60_000, 10)
  const states = [0, 1_000, 59_999].map((at) => counters.count('key:1', 2, at))
  assert.deepEqual(states, [
    { remaining: 1, ttl: 60_000, ttlInSeconds: 60, isExceeded: false },
    { remaining: 0, ttl: 59_000, ttlInSeconds: 59, isExceeded: false },
    { remaining: 0, ttl: 1, ttlInSeconds: 1, isExceeded: true }
  ])
  assert.deepEqual(counters.count('key:1', 2, 60_000), { remaining: 1, ttl: 60_000, ttlInSeconds: 60, isExceeded: false })
  assert.deepEqual(counters.count('key:2', 2, 60_500), { remaining: 1, ttl: 60_000, ttlInSeconds: 60, isExceeded: false })
})

test('at capacity a key not counted since it was last passed is dropped, and only that one', () => {
  const counters = new WindowCounters(60_000, 2)
  counters.count('a', 5, 0)
  counters.count('b', 5, 0)
  counters.count('a', 5, 1) // a is now the most recent
  counters.count('c', 5, 2) // drops b
  assert.equal(counters.count('a', 5, 3).remaining, 2)
  assert.equal(counters.count('b', 5, 4).remaining, 4) // b starts over; c is dropped
  assert.equal(counters.count('a', 5, 5).remaining, 1)
})
