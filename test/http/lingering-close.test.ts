import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { connect, type Socket } from 'node:net'
import { describe, test, type TestContext } from 'node:test'
import { LINGER } from '../../src/http/lingering-close.ts'
import { createTestStore, issueKey, validateResponse } from '../helpers/app.ts'
import { assertError } from '../helpers/errors.ts'
import { listenTestApp, readResponse, sleep, type RawResponse } from '../helpers/raw-http.ts'
import { startServer } from '../helpers/server-process.ts'

/**
 * A body over the limit is refused (413) while the client is still sending it. The response must
 * reach the client all the same: the connection lingers, reading and throwing away the rest of
 * the body, within bounds of time and bytes.
 */

const PIECE = Buffer.alloc(64 * 1024, 'x')
/** One chunk of Transfer-Encoding: chunked holding PIECE. */
const CHUNK = Buffer.concat([Buffer.from(`${PIECE.length.toString(16)}\r\n`), PIECE, Buffer.from('\r\n')])
const TOO_LARGE = 'The request body is larger than the limit of 16 KiB.'

const chunkedPost = (key: string) =>
  `POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`

async function open (port: number, options: { allowHalfOpen?: boolean } = {}): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', ...options })
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  return socket
}

/** Writes and waits until the socket takes more; settles early, false, when the socket is gone. */
function write (socket: Socket, data: string | Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed || !socket.writable) return resolve(false)
    if (socket.write(data)) return resolve(true)
    const settle = () => { socket.off('drain', settle); socket.off('close', settle); resolve(!socket.destroyed) }
    socket.once('drain', settle)
    socket.once('close', settle)
  })
}

interface Upload { response: RawResponse | string, socketError?: string, chunksWritten: number }

/**
 * A 2 MiB body, chunked, 64 KiB a write with a pause of a millisecond after each: a client on a
 * fast link that writes the body while the response is already on its way. Node's net client ends
 * its side when the server's FIN arrives, as many HTTP clients do.
 */
async function uploadTwoMiB (port: number, key: string): Promise<Upload> {
  const socket = await open(port)
  let socketError: string | undefined
  socket.on('error', (error: NodeJS.ErrnoException) => { socketError ??= error.code ?? error.message })
  const response = readResponse(socket, 20_000).catch((error: Error) => error.message)
  let chunksWritten = 0
  if (await write(socket, chunkedPost(key))) {
    for (; chunksWritten < 32 && await write(socket, CHUNK); chunksWritten++) await sleep(1)
    await write(socket, '0\r\n\r\n')
  }
  const result = { response: await response, chunksWritten }
  socket.destroy()
  return socketError === undefined ? result : { ...result, socketError }
}

async function serverProcess (t: TestContext): Promise<{ port: number, key: string }> {
  const { url, store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  await store.close()
  t.after(cleanup)
  const server = await startServer({ DATABASE_URL: url, RATE_LIMIT_PER_MINUTE: '0', MAX_CONNECTIONS_PER_ADDRESS: '0' })
  t.after(() => server.stop('SIGKILL'))
  return { port: server.port, key }
}

describe('a body refused while it is still arriving', { timeout: 120_000 }, () => {
  test('a 2 MiB body sent chunked in 64 KiB writes gets its 413 with the Error body every time (100 uploads, 8 at once, to a server process)', async (t) => {
    const { port, key } = await serverProcess(t)
    const uploads: Upload[] = []
    let started = 0
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (started++ < 100) uploads.push(await uploadTwoMiB(port, key))
    }))
    assert.equal(uploads.length, 100)
    const failures = uploads.filter(({ response, socketError }) => {
      if (typeof response === 'string' || socketError !== undefined) return true
      const documented = validateResponse({ method: 'POST', url: '/v1/pets', status: response.status, contentType: response.headers['content-type'], body: response.body })
      return response.status !== 413 || response.headers.connection !== 'close' || documented.length > 0
    })
    assert.deepEqual(failures, [], `${failures.length} of 100 uploads lost their 413`)
    for (const [i, { response }] of uploads.entries()) assertError(response as RawResponse, 413, 'payload_too_large', TOO_LARGE, { label: `upload ${i + 1}` })
  })

  test(`a client that goes on sending after its 413 is cut once ${LINGER.bytes / 1024 / 1024} MiB more have arrived`, async (t) => {
    const { port, key } = await listenTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '0' } })
    // Half-open: this client does not stop writing when the server's FIN comes.
    const socket = await open(port, { allowHalfOpen: true })
    t.after(() => socket.destroy())
    socket.on('error', () => {})
    const response = readResponse(socket)
    let written = 0
    await write(socket, chunkedPost(key))
    const started = Date.now()
    while (await write(socket, CHUNK)) {
      written += CHUNK.length
      if (written > 256 * 1024 * 1024) break
    }
    const elapsed = Date.now() - started
    assertError(await response, 413, 'payload_too_large', TOO_LARGE)
    // The cut comes from the bytes, not the clock; what the client wrote past the bound sat in the sockets' buffers.
    assert.ok(elapsed < LINGER.ms, `cut after ${elapsed} ms`)
    assert.ok(written > LINGER.bytes && written < LINGER.bytes + 16 * 1024 * 1024, `${(written / 1048576).toFixed(1)} MiB written before the cut`)
  })

  test('a create pipelined behind a refused body is dropped, as its response could never be sent: no pet is made', async (t) => {
    const api = await listenTestApp(t)
    const socket = await open(api.port)
    t.after(() => socket.destroy())
    const closed = new Promise((resolve) => socket.once('close', resolve))
    const received: Buffer[] = []
    socket.on('data', (data: Buffer) => received.push(data))
    socket.on('error', () => {})
    const pet = '{"name":"Pipelined","categoryId":7}'
    socket.write(Buffer.concat([Buffer.from(chunkedPost(api.key)), CHUNK, Buffer.from('0\r\n\r\n'), Buffer.from(
      `POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${api.key}\r\nContent-Type: application/json\r\nContent-Length: ${pet.length}\r\n\r\n${pet}`)]))
    await closed
    const statusLines = Buffer.concat(received).toString('latin1').match(/^HTTP\/1\.1 \d+/gm)
    assert.deepEqual(statusLines, ['HTTP/1.1 413'])
    // The store is asked after the connection is gone: a create that ran would have finished by now.
    await sleep(200)
    assert.equal(await api.store.countPets(), 0)
  })

  test(`a client that trickles the rest of its body is cut ${LINGER.ms} ms after its 413`, async (t) => {
    const { port, key } = await listenTestApp(t, { env: { RATE_LIMIT_PER_MINUTE: '0', REQUEST_TIMEOUT_MS: '30000', HEADERS_TIMEOUT_MS: '5000' } })
    const socket = await open(port, { allowHalfOpen: true })
    t.after(() => socket.destroy())
    socket.on('error', () => {})
    const response = readResponse(socket)
    await write(socket, chunkedPost(key))
    await write(socket, CHUNK)
    const refused = await response
    const since = Date.now()
    assertError(refused, 413, 'payload_too_large', TOO_LARGE)
    // One byte of body every 100 ms: never done, never idle.
    while (Date.now() - since < 10_000 && await write(socket, '1\r\nx\r\n')) await sleep(100)
    const cutAfter = Date.now() - since
    assert.ok(cutAfter >= LINGER.ms - 100 && cutAfter < LINGER.ms + 1500, `cut ${cutAfter} ms after the response`)
  })

  test('Node ends a connection it does not keep by calling socket.destroySoon() once the response has finished: the call the lingering close replaces', async (t) => {
    const calls: Array<{ finished: boolean }> = []
    const server = createServer((request, response) => {
      const socket = request.socket
      const destroySoon = socket.destroySoon
      socket.destroySoon = () => { calls.push({ finished: response.writableFinished }); destroySoon.call(socket) }
      // As Fastify refuses a body: before it is in, and closing the connection.
      response.writeHead(413, { connection: 'close', 'content-length': '0' }).end()
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.after(() => server.close())
    const socket = await open((server.address() as { port: number }).port)
    t.after(() => socket.destroy())
    socket.on('error', () => {})
    socket.resume()
    socket.write('POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\npart of the body')
    await once(socket, 'close')
    assert.deepEqual(calls, [{ finished: true }])
  })
})
