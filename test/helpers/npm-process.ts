import { spawn, type ChildProcess } from 'node:child_process'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * `npm start` as an operator runs it: npm, and the server it execs as its child. Detached, so
 * that it leads a process group of its own, which a test may signal as a whole the way a
 * terminal's Ctrl-C, `kill -- -PGID` or systemd's KillMode=control-group do.
 */

const ROOT = new URL('../..', import.meta.url).pathname
const START_TIMEOUT_MS = 30_000

export interface NpmStart {
  npm: ChildProcess
  /** The server's pid (npm's child), from its log. */
  serverPid: number
  /** http://127.0.0.1:PORT of the API. */
  url: string
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export async function startNpm (t: TestContext, env: Record<string, string>): Promise<NpmStart> {
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    // METRICS_PORT=0: the metrics listener must not collide with other servers on the machine.
    // No load shedding unless the test sets MAX_EVENT_LOOP_DELAY_MS: a busy machine is no overload.
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  npm.stdout!.on('data', (chunk: Buffer) => { stdout += chunk })
  npm.stderr!.on('data', (chunk: Buffer) => { stderr += chunk })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    npm.once('exit', (code, signal) => resolve({ code, signal }))
  })
  let serverPid: number | undefined
  t.after(() => {
    // By pid: the group may already be gone, or hold only what this test started.
    if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL')
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL')
  })
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline && npm.exitCode === null) {
    // The metrics listener logs a "Server listening" line too: the API is the one with /readyz.
    for (const found of stdout.matchAll(/"pid":(\d+),[^\n]*"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/g)) {
      serverPid = Number(found[1])
      const ready = await fetch(`${found[2]}/readyz`).then((res) => res.status === 200, () => false)
      if (ready) return { npm, serverPid, url: found[2]!, stdout: () => stdout, stderr: () => stderr, exited }
    }
    await sleep(50)
  }
  throw new Error(`npm start did not become ready:\n${stdout}\n${stderr}`)
}

/** The JSON log lines written so far. */
export function logLinesOf (stdout: string): Array<Record<string, unknown>> {
  return stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line))
}
