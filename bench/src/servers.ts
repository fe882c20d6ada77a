import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A server under test, started in its own process (pinned to core 0 where taskset works). */
export interface BenchServer { name: string, url: string, pid: number, startupMs: number, stop(): Promise<void> }

/** The address every benchmarked server listens on, given to it as `HOST`. */
export const SERVER_HOST = '127.0.0.1'

export const canPin = spawnSync('taskset', ['-c', '0', 'true']).status === 0

/**
 * The repository's root, found from this file: the benchmark runs from the root (npm run bench)
 * or from bench/ (its own scripts and tests), and the servers it starts are the same either way.
 */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The service's entry point in a tree of the repository (the working tree, or bench:ab's other commit). */
export const serviceScript = (root = REPO_ROOT) => join(root, 'src/server.ts')

/** The bare Fastify server the service is measured against. */
export const BASELINE_SCRIPT = fileURLToPath(new URL('./baseline.ts', import.meta.url))

export const START_SCRIPT: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start

/** The Node flags of `npm start` (package.json), so the service is measured as operators run it. */
export const START_FLAGS: string[] = /\bnode ((?:--\S+ )*)src\/server\.ts/.exec(START_SCRIPT)?.[1]?.trim().split(' ').filter(Boolean) ?? []

/** The environment `npm start` sets before `node` (the compile cache, glibc's malloc arenas). */
export const START_ENV: Record<string, string> = Object.fromEntries(
  // Split at the first '=' only: a value may hold one too (split(..., 2) would cut it off).
  (/^((?:\w+=\S+ )*)(?:exec )?node /.exec(START_SCRIPT)?.[1] ?? '').trim().split(' ').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])
)

/** Moves this process (the load generator) to core 1, away from the servers on core 0. */
export function pinSelfToCore1 (): boolean {
  return canPin && spawnSync('taskset', ['-cp', '1', String(process.pid)]).status === 0
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

async function waitReady (url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      const res = await fetch(url)
      if (res.status === 200 || res.status === 401) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`server not ready at ${url}`)
}

/**
 * `under`: a command the server runs under (valgrind …): then it is not pinned, as runs under
 * it go on side by side, and it may take minutes to be ready. `pinned: false` leaves the
 * server free to run on any core (several instances sharing the machine).
 */
export async function startServer (name: string, script: string, env: Record<string, string>, readyPath: string, nodeFlags: string[] = [], under: string[] = [], { pinned = true }: { pinned?: boolean } = {}): Promise<BenchServer> {
  const port = await freePort()
  const pin = pinned && canPin && under.length === 0
  // A child inherits its parent's cores, and the load generator has pinned itself to core 1:
  // a server that is not pinned to core 0 is given every core back.
  const cores = pin ? '0' : `0-${cpus().length - 1}`
  const command = [...under, process.execPath, ...nodeFlags, script]
  // The probe's first fetch loads its HTTP client: done before the clock starts, so start-up
  // measures the server, not the probe.
  await fetch(`http://127.0.0.1:${port}/`).catch(() => {})
  const started = performance.now()
  const child = spawn(canPin ? 'taskset' : command[0]!, canPin ? ['-c', cores, ...command] : command.slice(1), {
    // From the root, as npm start runs: NODE_COMPILE_CACHE names a folder relative to it.
    cwd: REPO_ROOT,
    // The same environment as npm start (compile cache, malloc arenas): start-up and memory are
    // measured as operators get them.
    // No drain window on stop: nothing sits in front of a benchmarked server. The rate limits
    // stay on (their cost is part of every request) but far above what a benchmark sends; load
    // shedding is off, as a benchmark saturates the server on purpose, and so is the per-address
    // cap: every load connection comes from 127.0.0.1.
    env: { ...START_ENV, SHUTDOWN_DRAIN_MS: '0', RATE_LIMIT_PER_MINUTE: '1000000000', FAILED_AUTH_LIMIT_PER_MINUTE: '1000000000', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_CONNECTIONS_PER_ADDRESS: '0', ...process.env, ...env, PORT: String(port), HOST: SERVER_HOST, METRICS_PORT: '0' },
    // Logs are written as in production, to a sink that costs the server what a pipe would.
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const url = `http://${SERVER_HOST}:${port}`
  await waitReady(url + readyPath, child, under.length === 0 ? 60_000 : 600_000)
  const startupMs = performance.now() - started
  return {
    name,
    url,
    pid: child.pid!,
    startupMs,
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }
}

/**
 * CPU seconds a server has used so far, user and system, from /proc (Linux; NaN elsewhere).
 * Divided by the requests of a run, it tells what one request costs the server's core, which
 * moves less with the machine's speed than throughput does.
 */
export function cpuSecondsOf (pid: number): { user: number, system: number } {
  try {
    // utime is field 14 of /proc/PID/stat, stime 15.
    const fields = procStatFields(`/proc/${pid}/stat`)
    return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND }
  } catch {
    return { user: NaN, system: NaN }
  }
}

/** The kernel's USER_HZ, the unit of the CPU times in /proc: 100 on Linux. */
export const TICKS_PER_SECOND = 100

/**
 * The fields of a /proc stat file after the command name, which ends at the last ')' (the name
 * itself may hold spaces and parentheses): the first is field 3 of proc(5), the state.
 */
export function procStatFields (path: string): string[] {
  const stat = readFileSync(path, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** Resident set size in MB, read from /proc (Linux). */
export function rssMb (pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb ? Number(kb) / 1024 : NaN
  } catch {
    return NaN
  }
}
