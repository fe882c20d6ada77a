import { once } from 'node:events'
import { connect, type NetConnectOpts, type Socket } from 'node:net'
import type { TestContext } from 'node:test'
import { readResponse } from './raw-http.ts'

/** Connections from chosen loopback addresses, for the tests of connection slots. */

export async function connectFrom (t: TestContext, port: number, localAddress: string, options: Partial<NetConnectOpts> = {}): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress, ...options } as NetConnectOpts)
  t.after(() => socket.destroy())
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Whether the server closed the socket within the time, and what it had sent before. */
export function closedWithin (socket: Socket, ms: number): Promise<{ closed: boolean, bytes: number }> {
  let bytes = 0
  socket.on('data', (chunk: Buffer) => { bytes += chunk.length })
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ closed: false, bytes }), ms)
    socket.once('close', () => { clearTimeout(timer); resolve({ closed: true, bytes }) })
  })
}

export async function healthz (socket: Socket): Promise<number> {
  const response = readResponse(socket)
  socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n')
  return (await response).status
}

export /** A keyed listing on the socket; its status. */
async function keyedList (socket: Socket, key: string, connection: 'close' | 'keep-alive' = 'close'): Promise<number> {
  const response = readResponse(socket, 5000)
  socket.write(`GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nConnection: ${connection}\r\n\r\n`)
  return (await response).status
}
