import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { START_FLAGS } from '../../bench/src/servers.ts'
import { encodeCursor } from '../../src/contract/int64.ts'
import { openStore } from '../../src/store/index.ts'
import { issueKey } from '../helpers/app.ts'
import { startServer, tempDir, type ServerProcess } from '../helpers/processes.ts'

/**
 * The reply cache bounds the server's memory in bytes: one key listing thousands of distinct
 * full pages of the longest multi-byte names (each page about 80 KB of UTF-8) from every
 * cursor leaves the process's resident memory within REPLY_CACHE_MAX_BYTES (its default,
 * 32 MiB) of the same service serving the same requests with no cache at all. Both servers run
 * side by side, so the heap's own slack (V8 keeps freed pages mapped, and grows old space well
 * past its live size between major collections) is in both and cancels out. Without the byte
 * bound every page is kept (REPLY_CACHE_ENTRIES is larger than PAGES): far more than the bound.
 */

const PAGES = 2500
const LIMIT = 100
const MIB = 1024 * 1024
const CACHE_BYTES = 32 * MIB
// Two processes' heaps never grow in step: what one collection keeps mapped and the other does
// not. Well below what the pages take unbounded (PAGES × about 80 KB, twice that as V8 keeps a
// string of emoji).
const MARGIN = 64 * MIB

function rssOf (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024
}

test('thousands of distinct full pages of long multi-byte names leave the server within REPLY_CACHE_MAX_BYTES of the same server without a cache', async (t) => {
  const dir = tempDir(t)
  const url = `sqlite:${join(dir, 'pets.db')}`
  const store = await openStore(url)
  await store.migrate()
  const { key } = await issueKey(store)
  const ids: bigint[] = []
  // 200 code points of two UTF-16 units each: the longest name.
  for (let i = 0; i < PAGES + LIMIT; i++) ids.push((await store.createPet({ name: `${'🐈'.repeat(199)}${i % 10}`, categoryId: BigInt(i) })).id)
  await store.close()

  const env = { DATABASE_URL: url, RATE_LIMIT_PER_MINUTE: '0' }
  // With npm start's Node options: how the heap grows around the cache is what operators run.
  const [cached, uncached] = await Promise.all([startServer(t, env, START_FLAGS), startServer(t, { ...env, REPLY_CACHE_MAX_BYTES: '0' }, START_FLAGS)])
  const headers = { authorization: `Bearer ${key}` }

  async function listEveryPage (server: ServerProcess): Promise<{ rss: number, pageBytes: number }> {
    let pageBytes = 0
    let next = 0
    const worker = async () => {
      while (next < PAGES) {
        const index = next++
        const res = await fetch(`${server.url}/v1/pets?limit=${LIMIT}&cursor=${encodeCursor(index === 0 ? 0n : ids[index - 1]!)}`, { headers })
        assert.equal(res.status, 200)
        assert.ok(res.headers.has('link'), 'a full page')
        pageBytes = (await res.arrayBuffer()).byteLength
      }
    }
    await Promise.all(Array.from({ length: 4 }, worker))
    return { rss: rssOf(server.child.pid!), pageBytes }
  }
  const [withCache, withoutCache] = await Promise.all([listEveryPage(cached), listEveryPage(uncached)])
  t.diagnostic(`${PAGES} pages of ${withCache.pageBytes} bytes: RSS ${(withCache.rss / MIB).toFixed(1)} MiB with the cache, ${(withoutCache.rss / MIB).toFixed(1)} MiB without`)
  assert.ok(withCache.rss <= withoutCache.rss + CACHE_BYTES + MARGIN, `the cache took ${((withCache.rss - withoutCache.rss) / MIB).toFixed(1)} MiB`)
})
