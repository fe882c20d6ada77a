import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { describe, test } from 'node:test'
import { connectFrom, keyedList } from '../helpers/connections.ts'
import { listenTestApp, sleep } from '../helpers/raw-http.ts'

/**
 * The attacks connection slots hold off, on each store: silent and slow connections holding
 * every slot of a process, from many addresses or one, reopened as fast as they are closed, do
 * not keep another address's keyed request out. Loopback gives distinct source addresses.
 */

describe('connection attacks', () => {
  for (const [flooders, label] of [[16, 'from 16 addresses'], [1, 'from one address']] as const) {
    test(`silent and slow connections ${label} holding every slot, reopened as they are closed, do not keep another address's keyed request from being served within a second`, async (t) => {
      const { port, key } = await listenTestApp(t, {
        env: { MAX_CONNECTIONS: '128', FIRST_BYTE_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '5000', CONNECTIONS_CHECK_INTERVAL_MS: '50', LOG_LEVEL: 'silent' }
      })
      // Each flooding connection is opened again as soon as it is closed; half send nothing,
      // half send their headers a few bytes at a time.
      const flood = { on: true }
      const tally = { opened: 0, closed: 0 }
      const holdOne = async (localAddress: string, slow: boolean) => {
        while (flood.on) {
          const socket = connect({ port, host: '127.0.0.1', localAddress })
          socket.on('error', () => {})
          tally.opened++
          const drip = slow ? setInterval(() => socket.write('X-A: b\r\n'), 200) : undefined
          if (slow) socket.write('GET /v1/pets HTTP/1.1\r\nHost: test\r\n')
          // Not events.once: it rejects on the socket's errors (EPIPE on a write after the close).
          await new Promise((resolve) => socket.once('close', resolve))
          clearInterval(drip)
          tally.closed++
        }
      }
      const addresses = Array.from({ length: flooders }, (_, i) => `127.0.0.${i + 2}`)
      const floods = Array.from({ length: 160 }, (_, i) => holdOne(addresses[i % flooders]!, i % 2 === 1))
      await sleep(500)

      const waits: number[] = []
      const statuses: number[] = []
      for (let i = 0; i < 20; i++) {
        const started = performance.now()
        statuses.push(await keyedList(await connectFrom(t, port, '127.0.0.20'), key).catch(() => 0))
        waits.push(performance.now() - started)
        await sleep(100)
      }
      flood.on = false
      await Promise.all(floods)
      t.diagnostic(`flood: ${JSON.stringify(tally)}; slowest request of the other address: ${Math.round(Math.max(...waits))} ms`)
      assert.ok(tally.closed > 0, 'the flood\'s connections were taken to make room')
      assert.deepEqual(statuses, Array(20).fill(200))
      assert.ok(Math.max(...waits) < 1000, `every request served within a second: ${waits.map(Math.round).join(', ')} ms`)
    })
  }
})
