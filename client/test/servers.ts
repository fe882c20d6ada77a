import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { sqlitePath } from '../../src/store/index.ts'
import type { Store } from '../../src/store/types.ts'
import { createTestStore, issueKey, testConfig } from '../../test/helpers/app.ts'

export interface RunningServer { app: FastifyInstance, store: Store, origin: string, baseUrl: string, key: string, databasePath: string }

/** The real service on a fresh SQLite store, listening on a free loopback port, closed after the test. */
export async function startServer (t: TestContext, env: Record<string, string> = {}): Promise<RunningServer> {
  const { url, store, cleanup } = await createTestStore()
  const { key } = await issueKey(store)
  const app = await buildApp({ config: testConfig(env), store })
  t.after(async () => { await app.close(); await cleanup() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  return { app, store, origin, baseUrl: `${origin}/v1`, key, databasePath: sqlitePath(url) }
}

export interface StubRequest { attempt: number, method: string, url: string, headers: IncomingMessage['headers'], body: string }
/**
 * What the stub does with one request: respond itself, pass it on, pass it on and then hang up,
 * never respond (`hang`), or send the status, headers and a first byte of the body and no more (`stall`).
 */
export type StubAction = { status: number, headers?: Record<string, string>, body?: string } | 'forward' | 'forward-then-drop' | 'hang' | 'stall'

/**
 * A tiny HTTP server in front of the real one, for what the service does not do on demand:
 * 503/429 with Retry-After, and a response lost after the service has acted.
 */
export async function startStub (t: TestContext, target: string, decide: (request: StubRequest) => StubAction) {
  const seen: StubRequest[] = []
  const server = createServer((req, res) => { handle(req, res).catch(() => res.destroy()) })
  async function handle (req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const request: StubRequest = { attempt: seen.length + 1, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() }
    seen.push(request)
    const action = decide(request)
    if (action === 'hang') return
    if (action === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json' }).write('[')
      return
    }
    if (typeof action === 'object') {
      res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers }).end(action.body ?? '')
      return
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>
    const response = await fetch(target + request.url, { method: request.method, headers, body: request.body === '' ? undefined : request.body })
    const text = await response.text()
    if (action === 'forward-then-drop') { res.socket?.destroy(); return }
    res.writeHead(response.status, Object.fromEntries([...response.headers].filter(([name]) => !['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)))).end(text)
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}
