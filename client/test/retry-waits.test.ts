import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { createPetstoreClient, PetstoreError, type RetryOptions } from '../src/index.ts'

// No server here: the tests record every setTimeout of this process, which an HTTP client's own
// keep-alive timers would join.

/** What a scripted fetch does on one attempt: respond with a status (and Retry-After), or reject. */
type Scripted = { status: number, retryAfter?: string } | Error

/**
 * A client whose fetch plays `script`, one entry per attempt, and the waits the retries asked of
 * setTimeout (each then runs at once, so no test waits for real).
 */
function scriptedClient (t: TestContext, retry: RetryOptions | false, script: Scripted[]) {
  const waits: number[] = []
  const realSetTimeout = globalThis.setTimeout
  t.mock.method(globalThis, 'setTimeout', (callback: () => void, ms: number) => {
    waits.push(ms)
    return realSetTimeout(callback, 0)
  })
  let attempts = 0
  const client = createPetstoreClient({
    baseUrl: 'http://petstore.invalid/v1',
    apiKey: 'psk_x',
    retry,
    async fetch () {
      const step = script[attempts++]
      assert.ok(step, `attempt ${attempts} is beyond the script`)
      if (step instanceof Error) throw step
      if (step.status === 200) return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } })
      const headers: Record<string, string> = step.retryAfter === undefined ? {} : { 'retry-after': step.retryAfter }
      return new Response(`{"code":"unavailable","message":"HTTP ${step.status}","status":${step.status}}`, { status: step.status, headers })
    }
  })
  return { client, waits, attempts: () => attempts }
}

test('Retry-After within maxDelayMs is waited for exactly; beyond it the error is thrown without a wait', async (t) => {
  const within = scriptedClient(t, { maxDelayMs: 5000 }, [{ status: 503, retryAfter: '2' }, { status: 200 }])
  assert.deepEqual(await within.client.pets.list(), { pets: [], next: undefined })
  assert.deepEqual(within.waits, [2000])

  const beyond = scriptedClient(t, { maxDelayMs: 5000 }, [{ status: 429, retryAfter: '6' }])
  await assert.rejects(beyond.client.pets.list(), { name: 'PetstoreError', status: 429, retryAfterSeconds: 6 })
  assert.deepEqual({ attempts: beyond.attempts(), waits: beyond.waits }, { attempts: 1, waits: [] })
})

test('without Retry-After the backoff starts from baseDelayMs and doubles, with jitter, capped at maxDelayMs', async (t) => {
  const doubling = scriptedClient(t, { attempts: 4, baseDelayMs: 100 }, [{ status: 503 }, { status: 429 }, { status: 503 }, { status: 200 }])
  await doubling.client.pets.list()
  assert.equal(doubling.waits.length, 3)
  const [first = 0, second = 0, third = 0] = doubling.waits
  assert.ok(first >= 50 && first <= 100 && second >= 100 && second <= 200 && third >= 200 && third <= 400, `waits ${doubling.waits}`)

  const capped = scriptedClient(t, { baseDelayMs: 1000, maxDelayMs: 300 }, [new TypeError('fetch failed'), new TypeError('fetch failed'), { status: 200 }])
  await capped.client.pets.list()
  assert.deepEqual(capped.waits, [300, 300])
})

test('any rejected fetch is a network error and retried, whatever its message; the last one is thrown as its cause', async (t) => {
  const unusual = new Error('socket hang up')
  const last = new TypeError('a message no runtime uses')
  const { client, attempts } = scriptedClient(t, { baseDelayMs: 0 }, [new TypeError('Failed to fetch'), unusual, last])
  await assert.rejects(client.pets.list(), (error: unknown) => {
    assert.ok(error instanceof PetstoreError)
    assert.deepEqual({ status: error.status, code: error.code, message: error.message, cause: error.cause },
      { status: 0, code: 'network_error', message: 'GET /v1/pets got no response: a message no runtime uses', cause: last })
    return true
  })
  assert.equal(attempts(), 3)
})

test('attempts bound the retries, Retry-After ones included; a Retry-After takes no backoff step; 500 and retry: false are tried once', async (t) => {
  const bounded = scriptedClient(t, { attempts: 3 }, [{ status: 503, retryAfter: '0' }, { status: 429, retryAfter: '0' }, { status: 503, retryAfter: '0' }])
  await assert.rejects(bounded.client.pets.list(), { status: 503 })
  assert.deepEqual({ attempts: bounded.attempts(), waits: bounded.waits }, { attempts: 3, waits: [0, 0] })

  const mixed = scriptedClient(t, { baseDelayMs: 100 }, [{ status: 429, retryAfter: '0' }, { status: 503 }, { status: 200 }])
  await mixed.client.pets.list()
  const [retryAfter, backoff = 0] = mixed.waits
  assert.ok(mixed.waits.length === 2 && retryAfter === 0 && backoff >= 50 && backoff <= 100, `waits ${mixed.waits}`)

  const internal = scriptedClient(t, {}, [{ status: 500, retryAfter: '0' }])
  await assert.rejects(internal.client.pets.list(), { status: 500 })
  const off = scriptedClient(t, false, [{ status: 503 }])
  await assert.rejects(off.client.pets.list(), { status: 503 })
  assert.deepEqual([internal.attempts(), off.attempts(), internal.waits.length + off.waits.length], [1, 1, 0])
})

test('retry delays that are not 0 or more milliseconds are refused when the client is made', () => {
  const make = (retry: RetryOptions) => () => createPetstoreClient({ baseUrl: 'http://petstore.invalid/v1', apiKey: 'psk_x', retry })
  assert.throws(make({ baseDelayMs: -1 }), { name: 'RangeError', message: 'retry.baseDelayMs -1 is not a finite 0 or more milliseconds' })
  assert.throws(make({ maxDelayMs: Number.NaN }), { name: 'RangeError', message: 'retry.maxDelayMs NaN is not 0 or more milliseconds' })
})

test('an abort during a Retry-After wait ends the wait and the call with the signal\'s reason', { timeout: 10_000 }, async (t) => {
  const controller = new AbortController()
  // The wait's timer never fires here: only the abort can end it.
  t.mock.method(globalThis, 'setTimeout', () => { queueMicrotask(() => controller.abort('gave up')) })
  let attempts = 0
  const client = createPetstoreClient({
    baseUrl: 'http://petstore.invalid/v1',
    apiKey: 'psk_x',
    async fetch () {
      attempts++
      return new Response('{"code":"unavailable","message":"HTTP 503","status":503}', { status: 503, headers: { 'retry-after': '5' } })
    }
  })
  await assert.rejects(client.pets.list({ signal: controller.signal }), (error: unknown) => error === 'gave up')
  assert.equal(attempts, 1)
})
