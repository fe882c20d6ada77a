import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

/** Debian's haproxy on the configuration compose.yaml mounts, its addresses from the environment. */

export const HAPROXY = '/usr/sbin/haproxy'
export const HAPROXY_CFG = 'deploy/haproxy/haproxy.cfg'
const ROOT = new URL('../..', import.meta.url).pathname
const UP_TIMEOUT_MS = 30_000

export interface Haproxy {
  child: ChildProcess
  port: number
  /** The stats frontend's port: the stats page, and haproxy's Prometheus exporter on /metrics. */
  statsPort: number
  /** haproxy's own counters and states of the backend `petstore`: a row per server, and BACKEND. */
  stats(): Promise<Map<string, Record<string, string>>>
  /** The counters of the frontend `api`, where clients connect: scur, slim, dcon (connections refused), hrsp_4xx… */
  frontend(): Promise<Record<string, string>>
  /** Resolves once haproxy's health checks have put the server in rotation. */
  waitUp(server: string): Promise<void>
  logTail(): string
}

/** Why a test needing `what` cannot run here, or undefined: under CI a failure, else a loud skip. */
export function unavailable (t: TestContext, what: string, reason: string | undefined): boolean {
  if (reason === undefined) return false
  const message = `${what}: ${reason}`
  if (process.env.CI === 'true') assert.fail(message)
  process.stderr.write(`\n*** SKIPPED the stack test: ${message} ***\n\n`)
  t.skip(message)
  return true
}

export const haproxyMissing = () => existsSync(HAPROXY) ? undefined : `${HAPROXY} is missing: install it with apt-get install -y haproxy`

export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts haproxy in the foreground on `port`, with the instances at these addresses; the caller stops it by its pid. */
export async function startHaproxy (instances: [string, string], port: number): Promise<Haproxy> {
  const statsPort = await freePort()
  const child = spawn(HAPROXY, ['-db', '-f', HAPROXY_CFG], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PETSTORE_BIND: `127.0.0.1:${port}`,
      PETSTORE_STATS_BIND: `127.0.0.1:${statsPort}`,
      PETSTORE_1: instances[0],
      PETSTORE_2: instances[1]
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  const remember = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean))
    if (lines.length > 100) lines.splice(0, lines.length - 100)
  }
  child.stdout!.on('data', remember)
  child.stderr!.on('data', remember)
  const logTail = () => lines.join('\n')
  const rows = async () => {
    const csv = await (await fetch(`http://127.0.0.1:${statsPort}/;csv`)).text()
    const [header = '', ...lines] = csv.trim().split('\n')
    const names = header.replace(/^# /, '').split(',')
    return lines.map((line): Record<string, string> => Object.fromEntries(line.split(',').map((cell, i) => [names[i], cell])))
  }
  const stats = async () => {
    const servers = new Map<string, Record<string, string>>()
    for (const cells of await rows()) {
      if (cells.pxname === 'petstore') servers.set(cells.svname!, cells)
    }
    return servers
  }
  const frontend = async () => {
    const row = (await rows()).find((cells) => cells.pxname === 'api' && cells.svname === 'FRONTEND')
    assert.ok(row, 'haproxy has no frontend api')
    return row
  }
  const waitUp = async (server: string) => {
    const deadline = Date.now() + UP_TIMEOUT_MS
    for (;;) {
      const status = await stats().then((all) => all.get(server)?.status, () => undefined)
      if (status === 'UP') return
      assert.ok(child.exitCode === null, `haproxy exited:\n${logTail()}`)
      assert.ok(Date.now() < deadline, `haproxy did not put ${server} in rotation within ${UP_TIMEOUT_MS} ms (status ${status}):\n${logTail()}`)
      await sleep(50)
    }
  }
  return { child, port, statsPort, stats, frontend, waitUp, logTail }
}
