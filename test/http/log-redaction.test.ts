import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/app.ts'
import { captureLog } from '../helpers/log-capture.ts'

/**
 * A key sent where it does not belong (pasted into the path, sent as X-Request-Id or in a
 * header the service quotes) never reaches the log: the line says psk_[REDACTED] instead.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function appWithLog (t: import('node:test').TestContext) {
  const log = captureLog()
  const api = await buildTestApp(t, { env: { LOG_LEVEL: 'info' }, logStream: log.stream })
  return { ...api, log }
}

test('a key in the path is logged as psk_[REDACTED], also percent-encoded or cut short, and the query stays out', async (t) => {
  const api = await appWithLog(t)
  const key = api.key
  const cases: Array<[url: string, path: string, status: number]> = [
    [`/v1/pets/${key}`, '/v1/pets/psk_[REDACTED]', 400],
    [`/${key}/pets`, '/psk_[REDACTED]/pets', 404],
    [`/v1/pets/psk%5F${key.slice(4)}`, '/v1/pets/psk_[REDACTED]', 400],
    [`/v1/pets/x${key.slice(0, 24)}`, '/v1/pets/xpsk_[REDACTED]', 400],
    [`/v1/pets?cursor=${key}`, '/v1/pets', 400],
    [`/docs/${key}?key=${key}`, '/docs/psk_[REDACTED]', 404]
  ]
  for (const [url] of cases) await api.app.inject({ url, headers: api.auth })
  const lines = api.log.entries().filter((line) => line.msg === 'request')
  assert.deepEqual(lines.map(({ path, status }) => ({ path, status })), cases.map(([, path, status]) => ({ path, status })))
  assert.ok(!api.log.text().includes(key.slice(4, 24)), 'the log holds the key')
  // A short psk_ word is no key: it is logged as sent.
  await api.app.inject({ url: '/v1/pets/psk_short', headers: api.auth })
  assert.equal(api.log.entries().at(-1)?.path, '/v1/pets/psk_short')
})

test('an X-Request-Id that looks like a key is not taken: a fresh id is made, logged and returned', async (t) => {
  const api = await appWithLog(t)
  const secret = api.key.slice(4)
  const given = [api.key, `trace-${api.key.slice(0, 30)}`, `psk_${'a'.repeat(20)}`, `psk_${'a'.repeat(19)}`, `req-${secret}`, `${secret}-1`, `${secret}_retry2`]
  for (const id of given) {
    const res = await api.app.inject({ url: '/v1/pets', headers: { ...api.auth, 'x-request-id': id } })
    const returned = String(res.headers['x-request-id'])
    assert.match(returned, UUID, `kept ${id}`)
    assert.equal(api.log.entries().at(-1)?.reqId, returned)
  }
  assert.equal(api.log.entries().length, given.length)
  // An id of short runs, with no psk_ or psk-, is kept.
  const kept = await api.app.inject({ url: '/v1/pets', headers: { ...api.auth, 'x-request-id': `trace-${'a'.repeat(30)}.1` } })
  assert.equal(kept.headers['x-request-id'], `trace-${'a'.repeat(30)}.1`)
  assert.ok(!api.log.text().includes(secret.slice(0, 20)) && !api.log.text().includes(secret.slice(23)), 'the log holds the key')
})

test('every other log line is cleaned on its way out: a key in any field or message is redacted', async (t) => {
  const api = await appWithLog(t)
  // What a line quoting the request would hold (a library's message, a header value).
  api.app.log.warn({ reason: `Unsupported Media Type: text/${api.key}` }, `refused ${api.key}`)
  const line = api.log.entries().at(-1)
  assert.deepEqual({ reason: line?.reason, msg: line?.msg }, { reason: 'Unsupported Media Type: text/psk_[REDACTED]', msg: 'refused psk_[REDACTED]' })
  // The display prefix the service logs on purpose (12 characters) is no key.
  api.app.log.info({ prefix: api.key.slice(0, 12) }, 'created')
  assert.equal(api.log.entries().at(-1)?.prefix, api.key.slice(0, 12))
  assert.ok(!api.log.text().includes(api.key.slice(4, 24)), 'the log holds the key')
})

/** The key's secret with some of its characters percent-encoded, as a client's encoder may send them. */
function encodedWithin (secret: string): string {
  const at = (i: number) => '%' + secret.charCodeAt(i).toString(16).toUpperCase()
  return secret.slice(0, 3) + at(3) + secret.slice(4, 20) + at(20).toLowerCase() + secret.slice(21)
}

test('every spelling of a key in the path is redacted: %70sk_, psk-, PSK_, the bare secret, characters encoded within it', async (t) => {
  const api = await appWithLog(t)
  const secret = api.key.slice(4)
  const urls = [
    `/v1/pets/%70sk_${secret}`,
    `/v1/pets/%2570sk_${secret}`,
    `/v1/pets/psk-${secret}`,
    `/v1/pets/PSK_${secret}`,
    `/v1/pets/Psk%2D${secret.slice(0, 20)}`,
    `/v1/pets/${secret}`,
    `/v1/pets/${encodedWithin(secret)}`,
    `/v1/pets/psk_${encodedWithin(secret)}`,
    `/v1/${secret}/pets`,
    `/v1/pets/id=${secret}`
  ]
  for (const url of urls) await api.app.inject({ url, headers: api.auth })
  const paths = api.log.entries().filter((line) => line.msg === 'request').map((line) => line.path)
  assert.deepEqual(paths, [
    ...Array(8).fill('/v1/pets/psk_[REDACTED]'),
    '/v1/psk_[REDACTED]/pets',
    '/v1/pets/id=psk_[REDACTED]'
  ])
  assert.ok(!api.log.text().includes(secret.slice(0, 20)), 'the log holds the key')
  assert.ok(!api.log.text().includes(secret.slice(21, 41)), 'the log holds the key')
})

test('a secret in the query stays out of the request line, and any line that quotes it redacts it', async (t) => {
  const api = await appWithLog(t)
  const secret = api.key.slice(4)
  await api.app.inject({ url: `/v1/pets?cursor=${secret}`, headers: api.auth })
  await api.app.inject({ url: `/v1/pets?key=%70sk_${encodedWithin(secret)}`, headers: api.auth })
  assert.deepEqual(api.log.entries().filter((line) => line.msg === 'request').map((line) => line.path), ['/v1/pets', '/v1/pets'])
  api.app.log.warn({ url: `/v1/pets?cursor=${secret}&key=%70sk_${encodedWithin(secret)}&other=psk-${secret}` }, `refused ${secret}`)
  const line = api.log.entries().at(-1)
  assert.deepEqual({ url: line?.url, msg: line?.msg }, {
    url: '/v1/pets?cursor=psk_[REDACTED]&key=psk_[REDACTED]&other=psk_[REDACTED]',
    msg: 'refused psk_[REDACTED]'
  })
  assert.ok(!api.log.text().includes(secret.slice(0, 20)), 'the log holds the key')
})

test('ordinary paths and lines are logged as sent: short, percent-encoded, long runs of one case or of both, UUIDs, hex digests', async (t) => {
  const api = await appWithLog(t)
  const paths = [
    '/v1/pets/123',
    '/v1/pets/9223372036854775807',
    '/v1/pets/%41bc%20d',
    '/docs/Some-Page_Name-That-Is-Long',
    `/v1/pets/${'ab'.repeat(40)}`,
    `/v1/pets/${'0123456789abcdef'.repeat(4)}`,
    '/v1/pets/00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '/v1/pets/550e8400-e29b-41d4-a716-446655440000',
    '/v1/pets/psk_short',
    '/docs/Mister-Whiskers-Von-Fluffenstein-The-Third-Esquire',
    `/v1/pets/${'CamelCaseWordsRunTogether'.repeat(3)}`
  ]
  for (const url of paths) await api.app.inject({ url, headers: api.auth })
  assert.deepEqual(api.log.entries().filter((line) => line.msg === 'request').map((line) => line.path), paths)
  const quoted = `GET ${paths.join(' ')}`
  api.app.log.info({ quoted }, 'quoted')
  assert.equal(api.log.entries().at(-1)?.quoted, quoted)
})
