import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { describe, test, type TestContext } from 'node:test'
import { captureLog } from './log-capture.ts'
import { listenTestApp, readAnswer, sleep } from './raw-http.ts'

/**
 * One address cannot take every connection slot: past MAX_CONNECTIONS_PER_ADDRESS its new
 * connections are closed at once, while other addresses are served. Loopback gives distinct
 * source addresses: the flood comes from 127.0.0.2, the other client from 127.0.0.3.
 */

async function connectFrom (t: TestContext, port: number, localAddress: string): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress })
  t.after(() => socket.destroy())
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Whether the server closed the socket within the time, and what it had sent before. */
function closedWithin (socket: Socket, ms: number): Promise<{ closed: boolean, bytes: number }> {
  let bytes = 0
  socket.on('data', (chunk: Buffer) => { bytes += chunk.length })
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ closed: false, bytes }), ms)
    socket.once('close', () => { clearTimeout(timer); resolve({ closed: true, bytes }) })
  })
}

async function healthz (socket: Socket): Promise<number> {
  const answer = readAnswer(socket)
  socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
  return (await answer).status
}

describe('connections per client address', () => {
  test('one address past MAX_CONNECTIONS_PER_ADDRESS has its new connections closed at once, and another address is still served', async (t) => {
    const log = captureLog()
    const { port } = await listenTestApp(t, { env: { MAX_CONNECTIONS: '6', MAX_CONNECTIONS_PER_ADDRESS: '4', LOG_LEVEL: 'info' }, logStream: log.stream })
    const flood: Socket[] = []
    for (let i = 0; i < 6; i++) flood.push(await connectFrom(t, port, '127.0.0.2'))
    const fates = await Promise.all(flood.map((socket) => closedWithin(socket, 1000)))
    assert.deepEqual(fates, [
      ...Array.from({ length: 4 }, () => ({ closed: false, bytes: 0 })),
      { closed: true, bytes: 0 },
      { closed: true, bytes: 0 }
    ])
    const other = await connectFrom(t, port, '127.0.0.3')
    assert.equal(await healthz(other), 200)
    assert.equal(await healthz(flood[0]!), 200, 'the connections under the cap are served')
    // The cap frees up as the address's connections end.
    flood[1]!.destroy()
    await sleep(100)
    const again = await connectFrom(t, port, '127.0.0.2')
    assert.equal(await healthz(again), 200)
    // One warning for the flood, not one per refused connection.
    const warnings = log.entries().filter((line) => line.level === 40)
    assert.deepEqual(warnings.map(({ address, limit, msg }) => ({ address, limit, msg })), [
      { address: '127.0.0.2', limit: 4, msg: 'connections refused: this address holds MAX_CONNECTIONS_PER_ADDRESS connections' }
    ])
  })

  test('MAX_CONNECTIONS_PER_ADDRESS=0 puts no cap on an address', async (t) => {
    const { port } = await listenTestApp(t, { env: { MAX_CONNECTIONS_PER_ADDRESS: '0' } })
    const sockets: Socket[] = []
    for (let i = 0; i < 300; i++) sockets.push(await connectFrom(t, port, '127.0.0.2'))
    const fates = await Promise.all(sockets.map((socket) => closedWithin(socket, 500)))
    assert.equal(fates.filter((fate) => fate.closed).length, 0)
    assert.equal(await healthz(sockets[299]!), 200)
  })
})
