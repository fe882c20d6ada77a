import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/app.ts'
import { assertError, type ExpectedError } from '../helpers/errors.ts'

/**
 * The createPet bad-input matrix: each body, its documented response, and nothing stored.
 * Field values are written as raw JSON text, so numbers keep the exact spelling sent.
 */

const BASE = { name: '"Rex"', categoryId: '7' }
/** A NewPet body: the valid base with some fields replaced (raw JSON) or removed (undefined). */
function pet (fields: Record<string, string | undefined>): string {
  const merged = Object.entries({ ...BASE, ...fields }).filter(([, raw]) => raw !== undefined)
  return `{${merged.map(([key, raw]) => `${JSON.stringify(key)}:${raw}`).join(',')}}`
}
const named = (name: string) => pet({ name: JSON.stringify(name) })

const invalid = (...fields: Array<[field: string, message: string]>): ExpectedError => ({
  code: 'invalid_request',
  message: `Invalid request: ${fields.map(([field, message]) => `${field} ${message}`).join('; ')}.`,
  status: 400,
  details: fields.map(([field, message]) => ({ field, message }))
})
const notJson = (reason: string): ExpectedError => ({ code: 'invalid_request', message: `The request body is not valid JSON: ${reason}`, status: 400 })

const REQUIRED = 'is required'
const STRING = 'must be string'
const INTEGER = 'must be integer'
const NOT_INT64 = 'must be a signed 64-bit integer written without a fraction or exponent'
const OUT_OF_INT64 = 'must be a signed 64-bit integer (-9223372036854775808 to 9223372036854775807)'
const ONE_OF = 'must be one of available, pending, sold'
const BLANK_OR_CONTROL = 'must not be blank and must not contain control characters'
const NOT_AN_OBJECT = invalid(['body', 'must be a JSON object'])
const EMPTY: ExpectedError = { code: 'invalid_request', message: 'The request body is empty; a JSON object is required.', status: 400 }
const POISONED: ExpectedError = { code: 'invalid_request', message: 'The request body contains a forbidden property name (__proto__ or constructor.prototype).', status: 400 }
const NOT_JSON_MEDIA: ExpectedError = { code: 'unsupported_media_type', message: 'The request body must be application/json.', status: 415 }
const NOT_UTF8: ExpectedError = { code: 'invalid_request', message: 'The request body is not valid UTF-8.', status: 400 }
/** A valid body with raw bytes in the name: Rex, then `bytes`. */
const nameWithBytes = (...bytes: number[]) => Buffer.concat([Buffer.from('{"name":"Rex'), Buffer.from(bytes), Buffer.from('","categoryId":7}')])
const TOO_LARGE: ExpectedError = { code: 'payload_too_large', message: 'The request body is larger than the limit of 16 KiB.', status: 413 }

interface BadBody {
  input: string
  payload: string | Buffer
  /** Defaults to application/json; null sends no Content-Type at all. */
  contentType?: string | null
  response: ExpectedError
}

const BAD_BODIES: BadBody[] = [
  { input: 'name missing', payload: pet({ name: undefined }), response: invalid(['body.name', REQUIRED]) },
  { input: 'categoryId missing', payload: pet({ categoryId: undefined }), response: invalid(['body.categoryId', REQUIRED]) },
  { input: 'every field missing', payload: '{}', response: invalid(['body.name', REQUIRED], ['body.categoryId', REQUIRED]) },
  { input: 'fields under other names', payload: '{"Name":"Rex","category_id":7}', response: invalid(['body.name', REQUIRED], ['body.categoryId', REQUIRED]) },

  { input: 'name a number', payload: pet({ name: '5' }), response: invalid(['body.name', STRING]) },
  { input: 'name a boolean', payload: pet({ name: 'true' }), response: invalid(['body.name', STRING]) },
  { input: 'name an object', payload: pet({ name: '{"first":"Rex"}' }), response: invalid(['body.name', STRING]) },
  { input: 'name an array', payload: pet({ name: '["Rex"]' }), response: invalid(['body.name', STRING]) },
  { input: 'name null', payload: pet({ name: 'null' }), response: invalid(['body.name', STRING]) },
  { input: 'categoryId a numeric string "1"', payload: pet({ categoryId: '"1"' }), response: invalid(['body.categoryId', INTEGER]) },
  { input: 'categoryId a boolean', payload: pet({ categoryId: 'true' }), response: invalid(['body.categoryId', INTEGER]) },
  { input: 'categoryId an object', payload: pet({ categoryId: '{"id":7}' }), response: invalid(['body.categoryId', INTEGER]) },
  { input: 'categoryId an array', payload: pet({ categoryId: '[7]' }), response: invalid(['body.categoryId', INTEGER]) },
  { input: 'categoryId null', payload: pet({ categoryId: 'null' }), response: invalid(['body.categoryId', INTEGER]) },
  { input: 'categoryId 1.5', payload: pet({ categoryId: '1.5' }), response: invalid(['body.categoryId', INTEGER]) },
  { input: 'categoryId 1e3', payload: pet({ categoryId: '1e3' }), response: invalid(['body.categoryId', NOT_INT64]) },
  { input: 'categoryId 2^63, one past int64', payload: pet({ categoryId: '9223372036854775808' }), response: invalid(['body.categoryId', OUT_OF_INT64]) },
  { input: 'categoryId -2^63-1, one before int64', payload: pet({ categoryId: '-9223372036854775809' }), response: invalid(['body.categoryId', OUT_OF_INT64]) },
  { input: 'categoryId of 30 digits', payload: pet({ categoryId: '123456789012345678901234567890' }), response: invalid(['body.categoryId', OUT_OF_INT64]) },
  { input: 'categoryId -(30 digits)', payload: pet({ categoryId: '-123456789012345678901234567890' }), response: invalid(['body.categoryId', OUT_OF_INT64]) },
  { input: 'categoryId beyond a double', payload: pet({ categoryId: '1e400' }), response: invalid(['body.categoryId', 'must match format "int64"']) },
  { input: 'status unknown', payload: pet({ status: '"lost"' }), response: invalid(['body.status', ONE_OF]) },
  { input: 'status in another case', payload: pet({ status: '"Available"' }), response: invalid(['body.status', ONE_OF]) },
  { input: 'status empty', payload: pet({ status: '""' }), response: invalid(['body.status', ONE_OF]) },
  { input: 'status a number', payload: pet({ status: '1' }), response: invalid(['body.status', ONE_OF]) },
  { input: 'status an array', payload: pet({ status: '["available"]' }), response: invalid(['body.status', ONE_OF]) },
  { input: 'status null', payload: pet({ status: 'null' }), response: invalid(['body.status', ONE_OF]) },
  { input: 'every field null', payload: '{"name":null,"categoryId":null,"status":null}', response: invalid(['body.name', STRING], ['body.categoryId', INTEGER], ['body.status', ONE_OF]) },

  { input: 'name empty', payload: named(''), response: invalid(['body.name', 'must NOT have fewer than 1 characters']) },
  { input: 'name of 201 characters', payload: named('x'.repeat(201)), response: invalid(['body.name', 'must NOT have more than 200 characters']) },
  { input: 'name of 10 000 characters', payload: named('x'.repeat(10_000)), response: invalid(['body.name', 'must NOT have more than 200 characters']) },
  { input: 'name of 100 000 characters (body over 16 KiB)', payload: named('x'.repeat(100_000)), response: TOO_LARGE },
  { input: 'name one space', payload: named(' '), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name only spaces', payload: named('   '), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name only Unicode spaces (no-break, em)', payload: named('\u00a0\u2003'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name a tab', payload: named('\t'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with NUL', payload: named('Re\u0000x'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with a line feed', payload: named('Rex\n'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with an escape sequence', payload: named('\u001b[31mRex'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with a C1 control (U+0085 next line)', payload: named('Rex\u0085'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with a C1 control (U+009B control sequence introducer)', payload: named('\u009b31mRex'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with U+0080, the first C1 control', payload: named('Rex\u0080'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with U+009F, the last C1 control', payload: named('Rex\u009f'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with DEL', payload: named('Rex\u007f'), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name a lone high surrogate', payload: pet({ name: '"\\ud800"' }), response: invalid(['body.name', BLANK_OR_CONTROL]) },
  { input: 'name with a lone low surrogate', payload: pet({ name: '"Rex\\udc00"' }), response: invalid(['body.name', BLANK_OR_CONTROL]) },

  { input: 'name with the byte 0xFF (never UTF-8)', payload: nameWithBytes(0xff), response: NOT_UTF8 },
  { input: 'name with a Latin-1 é (0xE9 alone)', payload: nameWithBytes(0xe9), response: NOT_UTF8 },
  { input: 'name with a sequence cut short (0xE2 0x82)', payload: nameWithBytes(0xe2, 0x82), response: NOT_UTF8 },
  { input: 'name with an overlong slash (0xC0 0xAF)', payload: nameWithBytes(0xc0, 0xaf), response: NOT_UTF8 },
  { input: 'name with an encoded surrogate (0xED 0xA0 0x80)', payload: nameWithBytes(0xed, 0xa0, 0x80), response: NOT_UTF8 },
  { input: 'name with a code point past U+10FFFF (0xF4 0x90 0x80 0x80)', payload: nameWithBytes(0xf4, 0x90, 0x80, 0x80), response: NOT_UTF8 },

  { input: 'body null', payload: 'null', response: NOT_AN_OBJECT },
  { input: 'body an empty array', payload: '[]', response: NOT_AN_OBJECT },
  { input: 'body an array of pets', payload: `[${pet({})}]`, response: NOT_AN_OBJECT },
  { input: 'body a string', payload: '"Rex"', response: NOT_AN_OBJECT },
  { input: 'body a number', payload: '7', response: NOT_AN_OBJECT },
  { input: 'body empty', payload: '', response: EMPTY },
  { input: 'body only whitespace', payload: ' \n ', response: EMPTY },
  { input: 'malformed JSON: cut short', payload: '{"name":', response: notJson('Unexpected end of JSON input') },
  { input: 'malformed JSON: bare keys', payload: '{name:"Rex",categoryId:7}', response: notJson("Expected property name or '}' in JSON at position 1 (line 1 column 2)") },
  { input: 'malformed JSON: single quotes', payload: "{'name':'Rex'}", response: notJson("Expected property name or '}' in JSON at position 1 (line 1 column 2)") },
  { input: 'malformed JSON: trailing comma', payload: '{"name":"Rex","categoryId":7,}', response: notJson('Expected double-quoted property name in JSON at position 29 (line 1 column 30)') },
  { input: 'malformed JSON: two documents', payload: `${pet({})}{}`, response: notJson('Unexpected non-whitespace character after JSON at position 29 (line 1 column 30)') },
  { input: 'prototype-poisoned JSON: __proto__', payload: pet({ ['__proto__']: '{"admin":true}' }), response: POISONED },
  { input: 'prototype-poisoned JSON: nested __proto__', payload: pet({ meta: '{"__proto__":{"admin":true}}' }), response: POISONED },
  { input: 'prototype-poisoned JSON: constructor.prototype', payload: pet({ constructor: '{"prototype":{"admin":true}}' }), response: POISONED },

  { input: 'no Content-Type', payload: pet({}), contentType: null, response: NOT_JSON_MEDIA },
  { input: 'Content-Type text/plain', payload: pet({}), contentType: 'text/plain', response: NOT_JSON_MEDIA },
  { input: 'Content-Type form-urlencoded', payload: 'name=Rex&categoryId=7', contentType: 'application/x-www-form-urlencoded', response: NOT_JSON_MEDIA },
  { input: 'Content-Type application/xml', payload: '<pet><name>Rex</name></pet>', contentType: 'application/xml', response: NOT_JSON_MEDIA },
  { input: 'Content-Type a JSON-like vendor type', payload: pet({}), contentType: 'application/vnd.api+json', response: NOT_JSON_MEDIA },
  { input: 'body of 16 KiB + 1 byte', payload: named('x'.repeat(16 * 1024 + 1 - named('').length)), response: TOO_LARGE },
  { input: 'body of 2 MiB', payload: named('x'.repeat(2 * 1024 * 1024)), response: TOO_LARGE }
]

test('createPet replies to each bad body with its Error and stores nothing', async (t) => {
  const api = await buildTestApp(t)
  for (const { input, payload, contentType, response } of BAD_BODIES) {
    await t.test(input, async () => {
      const before = await api.store.countPets()
      const headers: Record<string, string> = { ...api.auth }
      if (contentType !== null) headers['content-type'] = contentType ?? 'application/json'
      const res = await api.inject({ method: 'POST', url: '/v1/pets', headers, payload })
      assertError(res, response.status, response.code, response.message, { details: response.details })
      assert.equal(await api.store.countPets(), before, 'nothing stored')
    })
  }
})

const ACCEPTED: Array<{ input: string, payload: string | Buffer, contentType?: string, stored: Record<string, unknown> }> = [
  { input: 'unknown fields', payload: pet({ color: '"red"', owner: '{"name":"Ann"}', tags: '["a"]', extra: 'null' }), stored: { name: 'Rex', categoryId: 7 } },
  { input: 'a client-chosen id', payload: pet({ id: '424242' }), stored: { name: 'Rex', categoryId: 7 } },
  { input: 'an unknown field holding an integer of 5000 digits', payload: pet({ big: '9'.repeat(5000) }), stored: { name: 'Rex', categoryId: 7 } },
  { input: 'Content-Type with charset', payload: pet({}), contentType: 'application/json; charset=utf-8', stored: { name: 'Rex', categoryId: 7 } },
  { input: 'Content-Type in capitals', payload: pet({}), contentType: 'Application/JSON', stored: { name: 'Rex', categoryId: 7 } },
  { input: 'whitespace around the document', payload: ` \n${pet({})}\n `, stored: { name: 'Rex', categoryId: 7 } },
  { input: 'name with multi-byte UTF-8 sent as bytes', payload: nameWithBytes(0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x90, 0x95), stored: { name: 'Rexé€🐕', categoryId: 7 } },
  { input: 'name with U+00A0, the first character past the C1 controls', payload: named('Rex\u00a0Jr'), stored: { name: 'Rex\u00a0Jr', categoryId: 7 } },
  { input: 'name with format characters (zero-width joiner, right-to-left mark)', payload: named('\u{1F415}\u200d\u{1F9BA} \u200fRex'), stored: { name: '\u{1F415}\u200d\u{1F9BA} \u200fRex', categoryId: 7 } },
  { input: 'name of 200 characters', payload: named('x'.repeat(200)), stored: { name: 'x'.repeat(200), categoryId: 7 } },
  { input: 'body just under 16 KiB', payload: pet({ pad: JSON.stringify('x'.repeat(16 * 1024 - 60)) }), stored: { name: 'Rex', categoryId: 7 } }
]

test('createPet accepts these bodies and stores only the declared fields', async (t) => {
  const api = await buildTestApp(t)
  for (const { input, payload, contentType, stored } of ACCEPTED) {
    await t.test(input, async () => {
      const res = await api.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': contentType ?? 'application/json' }, payload })
      assert.equal(res.statusCode, 201, res.body)
      const { id } = res.json()
      assert.deepEqual(res.json(), { id, ...stored })
      assert.deepEqual((await api.inject({ url: `/v1/pets/${id}`, headers: api.auth })).json(), { id, ...stored })
    })
  }
})
