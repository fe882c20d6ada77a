import { connect, type Socket } from 'node:net'
import type { TestContext } from 'node:test'
import { buildTestApp, validateResponse, type TestApp, type TestAppOptions } from './app.ts'

/**
 * Real HTTP at the byte level, for what no HTTP client will send: broken request lines,
 * oversized headers, requests that never finish.
 */

export interface RawResponse { status: number, headers: Record<string, string>, body: string, closed: boolean }

export type ListeningApp = TestApp & { port: number }

/** buildTestApp, listening on a free loopback port. */
export async function listenTestApp (t: TestContext, options: TestAppOptions = {}): Promise<ListeningApp> {
  const testApp = await buildTestApp(t, options)
  await testApp.app.listen({ port: 0, host: '127.0.0.1' })
  const address = testApp.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP')
  return { ...testApp, port: address.port }
}

export function openSocket (port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Reads one response: complete when its Content-Length is in, or when the server closes. */
export function readResponse (socket: Socket, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0)
    const timer = setTimeout(() => finish(new Error(`no complete response within ${timeoutMs} ms: ${received.toString('latin1')}`)), timeoutMs)
    const parse = (closed: boolean): RawResponse | undefined => {
      const text = received.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end < 0) return undefined
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
      const headers = Object.fromEntries(lines.map((line) => {
        const colon = line.indexOf(':')
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
      }))
      const body = received.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'))
      const length = Number(headers['content-length'] ?? NaN)
      if (!closed && !(body.length >= length)) return undefined
      return { status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8'), closed }
    }
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const response = parse(false)
      if (response) finish(undefined, response)
    }
    const onEnd = () => {
      const response = parse(true)
      finish(response ? undefined : new Error(`closed without a response: ${received.toString('latin1')}`), response)
    }
    function finish (error?: Error, response?: RawResponse) {
      clearTimeout(timer)
      socket.off('data', onData)
      socket.off('end', onEnd)
      socket.off('close', onEnd)
      if (error) reject(error)
      else resolve(response!)
    }
    socket.on('data', onData)
    socket.on('end', onEnd)
    socket.on('close', onEnd)
  })
}

/** Sends bytes on a new connection and reads the response. */
export async function exchange (port: number, request: string | Buffer, timeoutMs?: number): Promise<RawResponse> {
  const socket = await openSocket(port)
  try {
    const response = readResponse(socket, timeoutMs)
    socket.write(request)
    return await response
  } finally {
    socket.destroy()
  }
}

/** The same check every inject response gets: documented status, Error body, JSON. */
export function documentedErrors (method: string, url: string, response: RawResponse): string[] {
  return validateResponse({ method, url, status: response.status, contentType: response.headers['content-type'], body: response.body })
}

export function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
