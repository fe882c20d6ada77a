import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The service as operators run it: `node src/server.ts` in its own process, on a loopback port
 * chosen by the system, stopped by its PID. For the fault tests, which signal or kill it and
 * read its exit, also outside node:test (npm run test:faults); test/helpers/processes.ts serves the
 * tests that only need a server running.
 */

const SERVER_ENTRY = new URL('../../src/server.ts', import.meta.url).pathname

export interface ServerProcess {
  child: ChildProcess
  port: number
  /** Resolves when the process has exited, with its code or the signal that ended it. */
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  /** The last log lines, for failure messages. */
  logTail(): string
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

export async function startServer (env: Record<string, string>, startTimeoutMs = 30_000): Promise<ServerProcess> {
  const keyDir = mkdtempSync(join(tmpdir(), 'petstore-server-'))
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    // A first key, should the server make one, goes to a folder of its own (removed when it
    // exits), never to the default beside a database that is not a file: the project's ./data.
    // No load shedding unless the test sets MAX_EVENT_LOOP_DELAY_MS: a busy machine is no overload.
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0', FIRST_KEY_FILE: join(keyDir, 'first-api-key'), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  const remember = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean))
    if (lines.length > 200) lines.splice(0, lines.length - 200)
  }
  // Read both pipes to the end: a full pipe would block the server's synchronous log writes.
  child.stdout!.on('data', remember)
  child.stderr!.on('data', remember)
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      rmSync(keyDir, { recursive: true, force: true })
      resolve({ code, signal })
    })
  })
  const logTail = () => lines.join('\n')
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start within ${startTimeoutMs} ms:\n${logTail()}`)) }, startTimeoutMs)
    const watch = () => {
      const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(logTail())
      if (match) { clearTimeout(timer); child.stdout!.off('data', watch); resolve(Number(match[1])) }
    }
    child.stdout!.on('data', watch)
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`server exited (${code ?? signal}) before listening:\n${logTail()}`)) })
  })
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  return { child, port, exited, logTail, stop }
}

export interface HttpResponse { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** One request over the agent's keep-alive connections; rejects with the socket error (ECONNRESET…). */
export function send (agent: Agent, port: number, method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ agent, host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }))
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(body)
  })
}
