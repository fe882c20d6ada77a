import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Redis } from 'ioredis'
import { pino } from 'pino'
import { redisBreaker, type RedisState } from '../../src/auth/redis-breaker.ts'
import { captureLog } from '../helpers/log-capture.ts'

/**
 * The breaker's states on a clock of the test's own: a Redis whose PING the test makes succeed
 * or fail, and setTimeout and Date mocked, so each probe comes when the test moves the clock.
 */

const OPEN_MS = 5000
// Lets the promises of a probe or a recorded failure settle (setImmediate is not mocked).
const settle = () => new Promise((resolve) => setImmediate(resolve))

test('one failure opens the breaker; PINGs only after openMs, by the breaker; a failed probe stays quiet; one warning, one info line', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] })
  let pings = 0
  let redisReplies = true
  const client = { ping: async () => { pings++; if (!redisReplies) throw new Error('Connection is closed.'); return 'PONG' } } as unknown as Redis
  const log = captureLog()
  const changes: RedisState[] = []
  const breaker = redisBreaker(client, { openMs: OPEN_MS, log: pino({ level: 'debug' }, log.stream), onChange: (state) => changes.push(state) })
  t.after(() => breaker.stop())

  assert.equal(await breaker.check(), 'up')
  assert.deepEqual([breaker.isClosed(), pings, changes], [true, 1, []])

  redisReplies = false
  breaker.failed(new Error('Command timed out'))
  breaker.failed(new Error('Command timed out'))
  await settle()
  assert.deepEqual([breaker.isClosed(), changes], [false, ['down']])
  assert.equal(await breaker.check(), 'down', 'while open, down without asking')
  assert.equal(pings, 1)

  t.mock.timers.tick(OPEN_MS - 1)
  await settle()
  assert.equal(pings, 1, 'no probe before openMs')
  t.mock.timers.tick(1)
  await settle()
  assert.deepEqual([breaker.isClosed(), pings, changes], [false, 2, ['down']], 'the failed probe keeps it open')

  redisReplies = true
  t.mock.timers.tick(OPEN_MS)
  await settle()
  assert.deepEqual([breaker.isClosed(), pings, changes], [true, 3, ['down', 'up']])

  assert.deepEqual(log.entries().map((entry) => [entry.level, entry.msg, (entry.err as { message?: string } | undefined)?.message]), [
    [40, 'Redis is not responding: rate limits are not counted until it responds again', 'Command timed out'],
    [20, 'Redis is still not replying', 'Connection is closed.'],
    [30, 'Redis responds again: rate limits are counted again', undefined]
  ])
})

test('a PING that fails in check() opens the breaker; once stopped, no probe is sent', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] })
  let pings = 0
  const client = { ping: async () => { pings++; throw new Error('Connection is closed.') } } as unknown as Redis
  const changes: RedisState[] = []
  const breaker = redisBreaker(client, { openMs: OPEN_MS, log: pino({ level: 'silent' }), onChange: (state) => changes.push(state) })

  assert.equal(await breaker.check(), 'down')
  assert.deepEqual([breaker.isClosed(), changes], [false, ['down']])
  breaker.stop()
  t.mock.timers.tick(3 * OPEN_MS)
  await settle()
  assert.deepEqual([breaker.isClosed(), pings], [false, 1])
})
