import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createReplyCache, DEFAULT_CACHE_MAX_BYTES, entryBytes, type ReplyCache } from '../src/reply-cache.ts'

const reply = (n: number) => ({ etag: `"etag-${n}"`, text: `{"id":${n},"name":"pet ${n}","categoryId":${n}}` })
const contents = (cache: ReplyCache, paths: string[]) => Object.fromEntries(paths.map((path) => [path, cache.get(path)?.etag]))

test('an entry counts two bytes per UTF-16 code unit of its path, ETag and body', () => {
  assert.equal(entryBytes('pets/1', { etag: '"abc"', text: '{"name":"Ünal 🐕"}' }), 2 * (6 + 5 + 18))
})

test('the cache keeps replies within maxBytes, evicting the least recently used first', () => {
  const size = entryBytes('pets/1', reply(1))
  const cache = createReplyCache({ maxBytes: 2 * size })
  cache.set('pets/1', reply(1))
  cache.set('pets/2', reply(2))
  assert.equal(cache.bytes, 2 * size)
  // Reading pets/1 makes pets/2 the least recently used: the third entry pushes it out.
  assert.deepEqual(cache.get('pets/1'), reply(1))
  cache.set('pets/3', reply(3))
  assert.equal(cache.bytes, 2 * size)
  assert.deepEqual(contents(cache, ['pets/1', 'pets/2', 'pets/3']), { 'pets/1': '"etag-1"', 'pets/2': undefined, 'pets/3': '"etag-3"' })
})

test('setting a path again replaces its entry and its count; delete frees it', () => {
  const cache = createReplyCache({ maxBytes: 10_000 })
  cache.set('pets?limit=2', reply(1))
  const longer = { etag: '"etag-new"', text: reply(1).text + ' ' }
  cache.set('pets?limit=2', longer)
  assert.equal(cache.bytes, entryBytes('pets?limit=2', longer))
  assert.deepEqual(cache.get('pets?limit=2'), longer)
  cache.delete('pets?limit=2')
  cache.delete('never/kept')
  assert.equal(cache.bytes, 0)
  assert.equal(cache.get('pets?limit=2'), undefined)
})

test('a reply larger than maxBytes is not kept and evicts nothing; maxBytes 0 keeps nothing', () => {
  const size = entryBytes('pets/1', reply(1))
  const cache = createReplyCache({ maxBytes: size })
  cache.set('pets/1', reply(1))
  cache.set('pets/2', { etag: '"big"', text: 'x'.repeat(size) })
  assert.deepEqual(contents(cache, ['pets/1', 'pets/2']), { 'pets/1': '"etag-1"', 'pets/2': undefined })
  assert.equal(cache.bytes, size)

  const none = createReplyCache({ maxBytes: 0 })
  none.set('pets/1', reply(1))
  assert.deepEqual({ kept: none.get('pets/1'), bytes: none.bytes }, { kept: undefined, bytes: 0 })
})

test('maxBytes defaults to 4 MiB and must be a whole number of bytes', () => {
  assert.equal(DEFAULT_CACHE_MAX_BYTES, 4_194_304)
  const cache = createReplyCache()
  cache.set('pets?limit=100', { etag: '"big"', text: 'x'.repeat(2_000_000) })
  cache.set('pets?limit=99', { etag: '"big"', text: 'x'.repeat(2_000_000) })
  assert.deepEqual(contents(cache, ['pets?limit=100', 'pets?limit=99']), { 'pets?limit=100': undefined, 'pets?limit=99': '"big"' })
  for (const maxBytes of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => createReplyCache({ maxBytes }), { name: 'RangeError', message: `cache.maxBytes ${maxBytes} is not a whole number of bytes` })
  }
})
