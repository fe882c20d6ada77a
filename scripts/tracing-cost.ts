import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { procStatFields, START_ENV, START_FLAGS, TICKS_PER_SECOND } from '../bench/src/servers.ts'

/**
 * What tracing costs a request: three servers on one SQLite store of 1 000 pets, tracing off,
 * on (every request traced), and on with 1 request in 10 traced, the spans sent by OTLP/protobuf
 * to a local collector that discards them; loaded in turn by wrk, 16 connections for 10 s a
 * run, 3 rounds, each starting with the next server. Servers on core 0, wrk on core 1 (taskset). Prints the medians of throughput, p99 and
 * CPU time a request (the server's user and system time over the run, divided by its responses:
 * steadier than throughput on a shared machine), and the ratios on/off per round.
 *
 *   node scripts/tracing-cost.ts [--rounds 3] [--duration 10] [--connections 16]
 */

const ROOT = new URL('..', import.meta.url).pathname
const PETS = 1000
const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}
const ROUNDS = option('rounds', 3)
const DURATION_S = option('duration', 10)
const CONNECTIONS = option('connections', 16)
const WARM_UP_S = 3
const pinned = (core: number, command: string[]) => existsSync('/usr/bin/taskset') ? ['taskset', '-c', String(core), ...command] : command

function run (command: string[], env: Record<string, string>, input?: string): string {
  const result = spawnSync(command[0]!, command.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, input, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`${command.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

/** A collector that replies to every export with success and keeps nothing. */
async function discardingCollector () {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => { response.writeHead(200, { 'content-type': 'application/x-protobuf' }); response.end() })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }
}

async function startServer (databaseUrl: string, env: Record<string, string>): Promise<{ port: number, child: ChildProcess }> {
  // Started as `npm start` starts it: its Node options and environment, read from package.json.
  const [command, ...args] = pinned(0, [process.execPath, ...START_FLAGS, 'src/server.ts'])
  const child = spawn(command!, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      ...START_ENV,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      // Limits and shedding off: the load saturates the server on purpose.
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      SHUTDOWN_DRAIN_MS: '0',
      ...env
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let seen = ''
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      seen = (seen + chunk).slice(-4000)
      // Read on, and dropped: the log is not what is measured.
      const found = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(seen)
      if (found) resolve(Number(found[1]))
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  return { port, child }
}

interface Run { rps: number, p99Ms: number, cpuUsPerRequest: number }

/** User and system time of a process so far, in microseconds. */
function cpuUs (pid: number): number {
  const fields = procStatFields(`/proc/${pid}/stat`)
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND * 1e6
}

/** Asynchronous, so that this process keeps reading the servers' logs: a full pipe would stall them. */
async function wrk ({ port, child: server }: { port: number, child: ChildProcess }, path: string, key: string, seconds: number): Promise<Run> {
  const cpuBefore = cpuUs(server.pid!)
  const [command, ...args] = pinned(1, ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-H', `Authorization: Bearer ${key}`, `http://127.0.0.1:${port}${path}`])
  const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk })
  await once(child, 'close')
  const cpu = cpuUs(server.pid!) - cpuBefore
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m.exec(out)
  const scale = { us: 0.001, ms: 1, s: 1000 }[p99?.[2] as 'us' | 'ms' | 's']
  if (/Non-2xx/.test(out) || !p99) throw new Error(`unexpected wrk output:\n${out}`)
  const requests = Number(/(\d+) requests in/.exec(out)?.[1])
  return { rps, p99Ms: Number(p99[1]) * scale, cpuUsPerRequest: cpu / requests }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const dir = mkdtempSync(join(tmpdir(), 'petstore-tracing-cost-'))
const collector = await discardingCollector()
const servers: ChildProcess[] = []
try {
  const databaseUrl = `sqlite:${join(dir, 'petstore.db')}`
  const key = run([process.execPath, 'src/cli.ts', 'keys', 'create', '--name', 'tracing-cost'], { DATABASE_URL: databaseUrl }).trim()
  const pets = Array.from({ length: PETS }, (_, i) => JSON.stringify({ name: `pet-${i}`, categoryId: i % 50, status: 'available' })).join('\n')
  run([process.execPath, 'src/cli.ts', 'pets', 'import', '-'], { DATABASE_URL: databaseUrl }, pets)
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }
  const variants = [
    { name: 'off', env: {} },
    { name: 'on', env: traced },
    { name: 'on, 10 % sampled', env: { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } }
  ]
  const started = []
  for (const variant of variants) {
    const server = await startServer(databaseUrl, variant.env)
    servers.push(server.child)
    started.push({ ...variant, server })
  }
  const scenarios = [['list 20', '/v1/pets?limit=20'], ['get by id', '/v1/pets/500']] as const
  for (const [, path] of scenarios) for (const { server } of started) await wrk(server, path, key, WARM_UP_S)
  process.stdout.write(`wrk, ${CONNECTIONS} connections, ${DURATION_S} s a run, ${ROUNDS} rounds; ratios against "off", per round, then their median\n`)
  process.stdout.write('scenario  | tracing          | req/s | ratio | p99 ms | CPU µs a request | ratio\n')
  for (const [name, path] of scenarios) {
    // runs[round][variant]; each round starts with the next variant.
    const runs: Run[][] = []
    for (let round = 0; round < ROUNDS; round++) {
      const results: Run[] = []
      for (let i = 0; i < started.length; i++) {
        const at = (round + i) % started.length
        results[at] = await wrk(started[at]!.server, path, key, DURATION_S)
      }
      runs.push(results)
    }
    started.forEach(({ name: variant }, i) => {
      const of = (pick: (run: Run) => number) => median(runs.map((round) => pick(round[i]!)))
      const ratio = (pick: (run: Run) => number) => median(runs.map((round) => pick(round[i]!) / pick(round[0]!)))
      process.stdout.write([name.padEnd(9), variant.padEnd(16), of((r) => r.rps).toFixed(0), ratio((r) => r.rps).toFixed(2),
        of((r) => r.p99Ms).toFixed(2), of((r) => r.cpuUsPerRequest).toFixed(0), ratio((r) => r.cpuUsPerRequest).toFixed(2)].join(' | ') + '\n')
    })
  }
} finally {
  for (const child of servers) child.kill('SIGTERM')
  await Promise.all(servers.map((child) => child.exitCode === null ? once(child, 'exit') : undefined))
  collector.close()
  rmSync(dir, { recursive: true, force: true })
}
