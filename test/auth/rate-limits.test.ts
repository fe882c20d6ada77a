import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { Writable } from 'node:stream'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import { twoInstances } from '../helpers/two-instances.ts'
import { limitStore, LOCAL_CACHE_ENTRIES } from '../../src/auth/rate-limits.ts'
import { buildTestApp, issueKey, json } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'

const fields = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  policy: res.headers['ratelimit-policy'],
  state: res.headers.ratelimit,
  retryAfter: res.headers['retry-after']
})

/** The reset time counts down within the minute: the tests compare the rest exactly. */
function withoutReset (res: LightMyRequestResponse) {
  const { state, ...rest } = fields(res)
  const match = /^("[a-z-]+";r=\d+);t=(\d+)$/.exec(String(state))
  assert.ok(state === undefined || (match && Number(match[2]) >= 1 && Number(match[2]) <= 60), `RateLimit ${state}`)
  return { ...rest, state: match?.[1] }
}

describe('rate limit per API key', () => {
  test('every response of the operations carries the key\'s limit, counting down', async (t) => {
    const app = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '5' } })
    const responses = [
      await app.inject({ url: '/v1/pets', headers: app.auth }),
      await app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, ...json }, payload: '{"name":"Rex","categoryId":7}' }),
      await app.inject({ method: 'POST', url: '/v1/pets', headers: { ...app.auth, ...json }, payload: '{"name":""}' }),
      await app.inject({ url: '/v1/pets/99', headers: app.auth }),
      await app.inject({ url: '/v1/pets?limit=0', headers: app.auth })
    ]
    assert.deepEqual(responses.map(withoutReset), [200, 201, 400, 404, 400].map((status, i) => ({
      status, policy: '"default";q=5;w=60', state: `"default";r=${4 - i}`, retryAfter: undefined
    })))
  })

  test('past the limit: 429 rate_limited with Retry-After; another key keeps its own limit', async (t) => {
    const app = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
    const other = await issueKey(app.store, 'other')
    for (let i = 0; i < 2; i++) assert.equal((await app.inject({ url: '/v1/pets', headers: app.auth })).statusCode, 200)
    const refused = await app.inject({ url: '/v1/pets', headers: app.auth })
    assert.deepEqual(withoutReset(refused), { status: 429, policy: '"default";q=2;w=60', state: '"default";r=0', retryAfter: refused.headers.ratelimit?.toString().split('t=')[1] })
    assertError(refused, 429, 'rate_limited', 'This API key has used its 2 requests of the current minute; retry after the time in Retry-After.')
    const theirs = await app.inject({ url: '/v1/pets', headers: { authorization: `Bearer ${other.key}` } })
    assert.deepEqual(withoutReset(theirs), { status: 200, policy: '"default";q=2;w=60', state: '"default";r=1', retryAfter: undefined })
  })

  test('a limit\'s minute starts with its first request; once it is over the count starts again, whole', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() })
    const app = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
    const list = () => app.inject({ url: '/v1/pets', headers: app.auth })
    const responses = [await list()]
    for (const ms of [1_000, 58_999, 1]) {
      t.mock.timers.tick(ms)
      responses.push(await list())
    }
    const policy = '"default";q=2;w=60'
    assert.deepEqual(responses.map(fields), [
      { status: 200, policy, state: '"default";r=1;t=60', retryAfter: undefined },
      { status: 200, policy, state: '"default";r=0;t=59', retryAfter: undefined },
      { status: 429, policy, state: '"default";r=0;t=1', retryAfter: '1' },
      { status: 200, policy, state: '"default";r=1;t=60', retryAfter: undefined }
    ])
  })

  test('RATE_LIMIT_PER_MINUTE=0 switches the per-key limit off: no fields, never 429', async (t) => {
    const app = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '0' } })
    for (let i = 0; i < 30; i++) {
      assert.deepEqual(fields(await app.inject({ url: '/v1/pets', headers: app.auth })), { status: 200, policy: undefined, state: undefined, retryAfter: undefined })
    }
  })
})

describe('rate limit of failed authentication per client address', () => {
  test('failures count per address; at the limit the address is refused before any key is checked, a valid one too', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '3' } })
    const from = (remoteAddress: string, authorization: string) => app.inject({ url: '/v1/pets', headers: { authorization }, remoteAddress })
    const failures = [await from('10.0.0.1', 'Bearer psk_guess1'), await from('10.0.0.1', 'Basic eDp5'), await from('10.0.0.1', '')]
    assert.deepEqual(failures.map(withoutReset), [2, 1, 0].map((left) => ({
      status: 401, policy: '"failed-auth";q=3;w=60', state: `"failed-auth";r=${left}`, retryAfter: undefined
    })))
    const blocked = await from('10.0.0.1', app.auth.authorization)
    assert.deepEqual(withoutReset(blocked), { status: 429, policy: '"failed-auth";q=3;w=60', state: '"failed-auth";r=0', retryAfter: blocked.headers.ratelimit?.toString().split('t=')[1] })
    assertError(blocked, 429, 'rate_limited', 'Too many requests without a valid API key came from this address; retry after the time in Retry-After.')
    assert.equal((await from('10.0.0.2', app.auth.authorization)).statusCode, 200)
  })

  test('an address refused for its failures is let in again once their minute is over', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() })
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '1' } })
    const from = (authorization: string) => app.inject({ url: '/v1/pets', headers: { authorization }, remoteAddress: '10.0.0.1' })
    const responses = [await from('Bearer psk_guess')]
    for (const ms of [59_999, 1]) {
      t.mock.timers.tick(ms)
      responses.push(await from(app.auth.authorization))
    }
    const policy = '"failed-auth";q=1;w=60'
    assert.deepEqual(responses.map(fields), [
      { status: 401, policy, state: '"failed-auth";r=0;t=60', retryAfter: undefined },
      { status: 429, policy, state: '"failed-auth";r=0;t=1', retryAfter: '1' },
      { status: 200, policy: '"default";q=1000;w=60', state: '"default";r=999;t=60', retryAfter: undefined }
    ])
  })

  test('IPv6 clients count per /64, and an IPv4-mapped address counts as its IPv4 address', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '1' } })
    const from = async (remoteAddress: string) => (await app.inject({ url: '/v1/pets', remoteAddress })).statusCode
    assert.deepEqual([await from('2001:db8:1:2::1'), await from('2001:db8:1:2:ffff::9'), await from('2001:db8:1:3::1')], [401, 429, 401])
    assert.deepEqual([await from('10.0.0.9'), await from('::ffff:10.0.0.9'), await from('10.0.0.10')], [401, 429, 401])
  })

  test('behind a trusted proxy (TRUST_PROXY) the address is the client named in X-Forwarded-For', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '1', TRUST_PROXY: '127.0.0.1' } })
    const via = (client: string) => app.inject({ url: '/v1/pets', headers: { 'x-forwarded-for': client }, remoteAddress: '127.0.0.1' })
    assert.deepEqual([(await via('203.0.113.1')).statusCode, (await via('203.0.113.1')).statusCode, (await via('203.0.113.2')).statusCode], [401, 429, 401])
  })

  test('behind TRUST_PROXY (a hop count or the proxy addresses), left-most X-Forwarded-For entries the client writes do not change its counted address', async (t) => {
    for (const trustProxy of ['1', '127.0.0.1']) {
      const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '2', TRUST_PROXY: trustProxy } })
      // The proxy at 127.0.0.1 appends the address it sees; whatever comes before is the client's own.
      const via = (client: string) => app.inject({
        url: '/v1/pets',
        headers: { 'x-forwarded-for': `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}, ${client}` },
        remoteAddress: '127.0.0.1'
      })
      const statuses = [await via('203.0.113.7'), await via('203.0.113.7'), await via('203.0.113.7'), await via('203.0.113.8')].map((res) => res.statusCode)
      assert.deepEqual(statuses, [401, 401, 429, 401], `TRUST_PROXY=${trustProxy}`)
    }
  })

  test('successful requests do not count against the address', async (t) => {
    const app = await buildTestApp(t, { env: { FAILED_AUTH_LIMIT_PER_MINUTE: '1' } })
    for (let i = 0; i < 5; i++) assert.equal((await app.inject({ url: '/v1/pets', headers: app.auth })).statusCode, 200)
    assert.equal((await app.inject({ url: '/v1/pets' })).statusCode, 401)
  })
})

describe('rate-limit counters in memory', () => {
  test(`a limit counts at most ${LOCAL_CACHE_ENTRIES} keys at once: the least recently counted is dropped first, and only that one`, async () => {
    const store = limitStore('key', { redisKeyPrefix: 'unused:' })
    const count = (key: string) => new Promise<number | undefined>((resolve, reject) => {
      store.incr(key, (error, counted) => { if (error) reject(error); else resolve(counted?.current) }, 60_000, 5)
    })
    assert.deepEqual([await count('a'), await count('b'), await count('a')], [1, 1, 2])
    for (let i = 2; i < LOCAL_CACHE_ENTRIES; i++) await count(`filler-${i}`)
    await count('c') // one over: b, counted least recently, is dropped
    assert.deepEqual([await count('a'), await count('b'), await count('filler-3')], [3, 1, 2], 'b starts over; filler-2 made room for it')
  })
})

describe('rate limits across instances', () => {
  test('without Redis, each instance counts alone', async (t) => {
    const { list } = await twoInstances(t, { RATE_LIMIT_PER_MINUTE: '2' })
    const statuses = [await list(0), await list(1), await list(0), await list(1), await list(0)].map((r) => r.statusCode)
    assert.deepEqual(statuses, [200, 200, 200, 200, 429])
  })

  test('when Redis cannot be reached, requests pass uncounted and the log says why, once', async (t) => {
    const lines: string[] = []
    const logStream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
    // Never connected, and without an offline queue: every command fails at once, as when
    // the connection to Redis is lost.
    const unreachable = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false })
    t.after(() => unreachable.disconnect())
    const app = await buildTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '1', LOG_LEVEL: 'warn' }, redis: unreachable, logStream })
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(fields(await app.inject({ url: '/v1/pets', headers: app.auth })), { status: 200, policy: '"default";q=1;w=60', state: undefined, retryAfter: undefined })
    }
    const warnings = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 40)
    assert.deepEqual(warnings.map((entry) => [entry.msg, entry.err.message]), [
      ['Redis is not responding: rate limits are not counted until it responds again', 'Stream isn\'t writeable and enableOfflineQueue options is false']
    ])
  })
})
