import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'

const ROOT = new URL('../..', import.meta.url).pathname
const START_TIMEOUT_MS = 20_000

export interface CliResult { code: number | null, stdout: string, stderr: string }

/** `npm run --silent petstore -- ARGS`, without npm in between, on the Node 24 that runs the tests. */
export function runCli (args: string[], env: Record<string, string>): Promise<CliResult> {
  return runToExit(['src/cli.ts', ...args], env)
}

/** Runs a script of this project to its end; killed after timeoutMs. */
export async function runToExit (args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<CliResult> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  const [code] = await once(child, 'close') as [number | null]
  return { code, stdout, stderr }
}

export interface ServerProcess {
  /** http://127.0.0.1:PORT, without /v1. */
  url: string
  /** The metrics listener's http://HOST:PORT (METRICS_PORT, a free one unless the test names it). */
  metricsUrl: string
  child: ChildProcess
  stderr(): string
  /** Everything written to stdout so far: the JSON log. */
  stdout(): string
}

/**
 * Starts src/server.ts on 127.0.0.1 and ports the system picks (PORT=0, METRICS_PORT=0), read
 * back from its "Server listening" and "metrics listening" log lines; stopped by its pid when
 * the test ends.
 */
export async function startServer (t: TestContext, env: Record<string, string>, nodeFlags: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeFlags, 'src/server.ts'], {
    cwd: ROOT,
    // No drain window on stop: no load balancer is waiting to move traffic away in a test.
    // A first key, should the server make one, goes to a folder of the test's own, never to the
    // project's ./data (the default beside a database that is not a file). No load shedding
    // unless the test sets MAX_EVENT_LOOP_DELAY_MS: a busy machine is no overload.
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0', MAX_EVENT_LOOP_DELAY_MS: '0', ...firstKeyFileOf(t, env), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.after(() => stopProcess(child))
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk })
  const [url, metricsUrl] = await new Promise<[string, string]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${START_TIMEOUT_MS} ms: ${stderr}`)), START_TIMEOUT_MS)
    let buffered = ''
    let api: string | undefined
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk
      api ??= /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(buffered)?.[1]
      // Logged once the API listens.
      const metrics = api && /"msg":"metrics listening at (http:\/\/[^"]+)"/.exec(buffered)?.[1]
      if (api && metrics) {
        clearTimeout(timer)
        resolve([api, metrics])
      }
      buffered = buffered.slice(-2000)
    })
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited with ${code} before listening: ${stderr}`)) })
  })
  return { url, metricsUrl, child, stderr: () => stderr, stdout: () => stdout }
}

export async function stopProcess (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** The JSON log lines a server wrote to stdout so far. */
export function logLines (server: ServerProcess): Array<Record<string, unknown>> {
  return server.stdout().split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

/** FIRST_KEY_FILE in a temporary folder, unless the test names one or the key goes beside its SQLite file. */
function firstKeyFileOf (t: TestContext, env: Record<string, string>): Record<string, string> {
  const besideItsFile = env.DATABASE_URL?.startsWith('sqlite:') && env.DATABASE_URL !== 'sqlite::memory:'
  return 'FIRST_KEY_FILE' in env || besideItsFile ? {} : { FIRST_KEY_FILE: join(tempDir(t), 'first-api-key') }
}

/** A temporary directory removed when the test ends. */
export function tempDir (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-e2e-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}
