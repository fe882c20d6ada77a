import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parseJson, stringifyJson, toInt64 } from '../src/json.ts'
import { nextLink } from '../src/link.ts'
import { rateLimitOf } from '../src/meta.ts'
import { retryAfterSeconds } from '../src/retry.ts'
import { randomUuid } from '../src/uuid.ts'
import { generateTypes, GENERATED } from '../scripts/generate-types.ts'

const EXTREMES = '[{"id":9223372036854775807,"name":"Max \\"id\\":1","categoryId":-9223372036854775808,"status":"sold"}]'
const EXPECTED = [{ id: 9223372036854775807n, name: 'Max "id":1', categoryId: -9223372036854775808n, status: 'sold' }]

test('int64 fields are read exactly as bigint, with the source text and without it', () => {
  assert.deepEqual(parseJson(EXTREMES), EXPECTED)
  assert.deepEqual(parseJson(EXTREMES, 'bigint', false), EXPECTED)
  assert.deepEqual(parseJson('{"code":"not_found","message":"No pet has id 5.","status":404}', 'bigint', false), { code: 'not_found', message: 'No pet has id 5.', status: 404 })
})

test('int64 fields are read exactly as decimal strings in string mode, with the source text and without it, and JSON.stringify takes them', () => {
  const expected = [{ id: '9223372036854775807', name: 'Max "id":1', categoryId: '-9223372036854775808', status: 'sold' }]
  assert.deepEqual(parseJson(EXTREMES, 'string'), expected)
  assert.deepEqual(parseJson(EXTREMES, 'string', false), expected)
  assert.equal(JSON.stringify(parseJson(EXTREMES, 'string')), '[{"id":"9223372036854775807","name":"Max \\"id\\":1","categoryId":"-9223372036854775808","status":"sold"}]')
  assert.deepEqual(parseJson('{"code":"not_found","message":"No pet has id 5.","status":404}', 'string'), { code: 'not_found', message: 'No pet has id 5.', status: 404 })
})

test('bigint values are written as exact integer literals', () => {
  assert.equal(stringifyJson({ name: 'Rex', categoryId: 9223372036854775807n }), '{"name":"Rex","categoryId":9223372036854775807}')
  assert.equal(stringifyJson({ categoryId: -9223372036854775808n, status: 'sold' }), '{"categoryId":-9223372036854775808,"status":"sold"}')
})

test('int64 inputs: bigint, a safe-integer number or a decimal string; anything inexact or out of range is refused', () => {
  assert.equal(toInt64(7, 'categoryId'), 7n)
  assert.equal(toInt64(9223372036854775807n, 'categoryId'), 9223372036854775807n)
  assert.equal(toInt64('-9223372036854775808', 'categoryId'), -9223372036854775808n)
  assert.throws(() => toInt64('7.0', 'categoryId'), { name: 'RangeError', message: 'categoryId "7.0" is not a decimal integer' })
  assert.throws(() => toInt64(' 7', 'categoryId'), RangeError)
  assert.throws(() => toInt64('9223372036854775808', 'categoryId'), { message: 'categoryId 9223372036854775808 is outside the signed 64-bit range' })
  assert.throws(() => toInt64(2 ** 53, 'categoryId'), { name: 'RangeError', message: /^categoryId 9007199254740992 is beyond Number.MAX_SAFE_INTEGER, where a number may already be rounded; pass a bigint/ })
  // 2^60 is a number exactly, yet a neighbouring integer would have been rounded to it.
  assert.throws(() => toInt64(2 ** 60, 'categoryId'), { message: /^categoryId 1152921504606846976 is beyond Number.MAX_SAFE_INTEGER/ })
  assert.throws(() => toInt64(1.5, 'categoryId'), { name: 'RangeError', message: 'categoryId 1.5 is not an integer' })
  assert.throws(() => toInt64(2n ** 63n, 'categoryId'), { message: 'categoryId 9223372036854775808 is outside the signed 64-bit range' })
})

test('the next link is found among several links, rel in any form', () => {
  assert.equal(nextLink('<https://a.example/v1/pets?cursor=b>; rel="next"'), 'https://a.example/v1/pets?cursor=b')
  assert.equal(nextLink('<https://a.example/docs>; rel="deprecation"; type="text/html", <https://a.example/v1/pets?cursor=c>; rel=next'), 'https://a.example/v1/pets?cursor=c')
  assert.equal(nextLink('<https://a.example/v1/pets?cursor=d>; rel="prev next"'), 'https://a.example/v1/pets?cursor=d')
  assert.equal(nextLink('<https://a.example/v1/pets>; rel="successor-version"'), undefined)
  assert.equal(nextLink(null), undefined)
})

test('RateLimit-Policy and RateLimit are read as structured-field lists: the policy RateLimit reports on, with its q, w, r and t', () => {
  assert.deepEqual(rateLimitOf('"default";q=1000;w=60', '"default";r=998;t=42'), { policy: 'default', quota: 1000, windowSeconds: 60, remaining: 998, resetSeconds: 42 })
  // Several policies, a token name, a quoted comma, parameters in any order with spaces, a string parameter.
  assert.deepEqual(rateLimitOf('"burst, short";q=10;w=1, daily ; w=86400;q=5000;pk=:YWJj:', 'daily;t=7200;r=4999 , "burst, short";r=9;t=1'),
    { policy: 'daily', quota: 5000, windowSeconds: 86400, remaining: 4999, resetSeconds: 7200 })
  // A policy without its state (the counter was away), and the reverse.
  assert.deepEqual(rateLimitOf('"default";q=1000;w=60', null), { policy: 'default', quota: 1000, windowSeconds: 60, remaining: undefined, resetSeconds: undefined })
  assert.deepEqual(rateLimitOf(null, '"default";r=0;t=5'), { policy: 'default', quota: undefined, windowSeconds: undefined, remaining: 0, resetSeconds: 5 })
  assert.equal(rateLimitOf(null, null), undefined)
  assert.equal(rateLimitOf('', '  '), undefined)
  assert.equal(rateLimitOf('=nonsense', '"unterminated;r=1'), undefined)
})

test('Retry-After is read as seconds or as an HTTP date', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  assert.equal(retryAfterSeconds('3', now), 3)
  assert.equal(retryAfterSeconds('Thu, 01 Jan 2026 00:00:10 GMT', now), 10)
  assert.equal(retryAfterSeconds('soon', now), undefined)
  assert.equal(retryAfterSeconds(null, now), undefined)
})

test('idempotency keys are random v4 UUIDs', () => {
  const keys = new Set(Array.from({ length: 100 }, randomUuid))
  assert.equal(keys.size, 100)
  for (const key of keys) assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})

test('the generated types match the committed openapi.json (npm run client:types rewrites them)', async () => {
  assert.equal(readFileSync(GENERATED, 'utf8'), await generateTypes())
})

test('the client\'s runtime code imports its own files and its one declared dependency, p-retry: no node: modules', () => {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  assert.deepEqual(Object.keys(manifest.dependencies), ['p-retry'])
  assert.equal(manifest.peerDependencies, undefined)
  const folder = new URL('../src/', import.meta.url)
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
  assert.ok(files.length >= 7)
  const packages = new Set<string>()
  for (const file of files) {
    const source = readFileSync(new URL(file, folder), 'utf8')
    for (const [, specifier] of source.matchAll(/\bfrom\s+'([^']+)'/g)) {
      if (!/^\.\.?\//.test(specifier!)) packages.add(specifier!)
    }
    assert.doesNotMatch(source, /\bimport\(|\brequire\(|\bprocess\.|\bBuffer\b/, file)
  }
  assert.deepEqual([...packages], ['p-retry'])
})
