import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { encodeCursor } from '../src/contract/int64.ts'
import { openStore } from '../src/store/index.ts'
import { issueKey } from './helpers.ts'
import { startServer, tempDir } from './processes.ts'

/**
 * The answer cache bounds the server's memory in bytes: one key listing thousands of distinct
 * full pages of the longest multi-byte names (each page about 80 KB of UTF-8) from every
 * cursor leaves the process's resident memory within ANSWER_CACHE_MAX_BYTES (its default,
 * 32 MiB) above what it took before, plus a margin for the heap's own slack. Without the byte
 * bound every page is kept (ANSWER_CACHE_ENTRIES is larger than PAGES).
 */

const PAGES = 3000
const LIMIT = 100
const MIB = 1024 * 1024
const CACHE_BYTES = 32 * MIB
// V8's heap slack: old space may grow to several times its live size (the server's own heap
// plus the cache) before a major collection, and pages that collection frees stay mapped for
// reuse, so RSS sits well above the live heap. Still below what the pages take unbounded (PAGES
// × about 90 KB as V8 stores them, plus that slack on top), so a cache bounded only by entries
// fails.
const MARGIN = 256 * MIB

function rssOf (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024
}

test('thousands of distinct full pages of long multi-byte names leave the server within ANSWER_CACHE_MAX_BYTES of memory', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const dir = tempDir(t)
  const url = `sqlite:${join(dir, 'pets.db')}`
  const store = await openStore(url)
  await store.migrate()
  const { key } = await issueKey(store)
  const ids: bigint[] = []
  // 200 code points of two UTF-16 units each: the longest name, kept by V8 at 4 bytes a name
  // character.
  for (let i = 0; i < PAGES + LIMIT; i++) ids.push((await store.createPet({ name: `${'🐈'.repeat(199)}${i % 10}`, categoryId: BigInt(i) })).id)
  await store.close()

  const server = await startServer(t, { DATABASE_URL: url, METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '0' })
  const pid = server.child.pid!
  const headers = { authorization: `Bearer ${key}` }
  const fetchPage = async (cursor: bigint) => {
    const res = await fetch(`${server.url}/v1/pets?limit=${LIMIT}&cursor=${encodeCursor(cursor)}`, { headers })
    assert.equal(res.status, 200)
    return { bytes: (await res.arrayBuffer()).byteLength, full: res.headers.has('link') }
  }
  // The same work without the cache: the last page of the listing holds LIMIT pets too, and is
  // never kept, so the baseline includes what serving such pages costs.
  for (let i = 0; i < 100; i++) assert.equal((await fetchPage(ids[PAGES - 1]!)).full, false)
  const baseline = rssOf(pid)

  let peak = baseline
  let pageBytes = 0
  let next = 0
  const worker = async () => {
    while (next < PAGES) {
      const index = next++
      const page = await fetchPage(index === 0 ? 0n : ids[index - 1]!)
      assert.ok(page.full)
      pageBytes = page.bytes
      if (next % 100 === 0) peak = Math.max(peak, rssOf(pid))
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  const after = rssOf(pid)
  peak = Math.max(peak, after)
  t.diagnostic(`${PAGES} pages of ${pageBytes} bytes: RSS ${(baseline / MIB).toFixed(1)} MiB before, ${(after / MIB).toFixed(1)} MiB after, ${(peak / MIB).toFixed(1)} MiB at most`)
  assert.ok(after <= baseline + CACHE_BYTES + MARGIN, `RSS grew by ${((after - baseline) / MIB).toFixed(1)} MiB`)
})
